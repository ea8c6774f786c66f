//! Errors back off exponentially per key and the backoff resets after a success;
//! terminal errors are not retried; panics are contained, counted and retried like errors.
//! The first test runs with `KUBE_RT_TEST_KUBECONFIG` set against that cluster too, its
//! delays asserted on the simulator's clock only; the others assert delays and stay there.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::time::Instant;

/// Attempt times per key.
#[derive(Clone, Default)]
struct Attempts(Arc<Mutex<Vec<(String, Instant)>>>);

impl Attempts {
    fn record(&self, key: &str) -> usize {
        let mut all = self.0.lock();
        all.push((key.to_owned(), Instant::now()));
        all.iter().filter(|(k, _)| k == key).count()
    }

    fn of(&self, key: &str) -> Vec<Instant> {
        self.0
            .lock()
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, at)| *at)
            .collect()
    }
}

fn gaps(times: &[Instant]) -> Vec<Duration> {
    times.windows(2).map(|pair| pair[1] - pair[0]).collect()
}

/// The delay between attempts is the limiter's (5 ms · 2^n) up to timer granularity.
fn assert_backoff(gaps: &[Duration], expected_ms: &[u64]) {
    assert_eq!(gaps.len(), expected_ms.len(), "{gaps:?}");
    for (gap, expected) in gaps.iter().zip(expected_ms) {
        let expected = Duration::from_millis(*expected);
        assert!(
            *gap >= expected && *gap <= expected + Duration::from_millis(2),
            "gap {gap:?}, expected {expected:?} (all: {gaps:?})"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn errors_back_off_terminal_errors_stop_and_panics_are_contained() {
    let server = TestCluster::start().await.unwrap();
    // The delays are asserted on the simulator's paused clock only.
    let on_simulator = server.sim().is_some();
    let assert_delays = |gaps: &[Duration], expected_ms: &[u64]| {
        if on_simulator {
            assert_backoff(gaps, expected_ms);
        } else {
            assert_eq!(gaps.len(), expected_ms.len(), "{gaps:?}");
        }
    };
    let manager = Arc::new(manager(&server).build());
    let attempts = Attempts::default();
    let seen = attempts.clone();
    let controller = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    let n = seen.record(req.name());
                    let value = ctx
                        .get()
                        .and_then(|cm| cm.data.clone())
                        .and_then(|data| data.get("v").cloned())
                        .unwrap_or_default();
                    match (req.name(), value.as_str(), n) {
                        // Fails four times, then succeeds.
                        ("flaky", "1", 1..=4) => Err(ReconcileError::new("not yet")),
                        // After an update: fails once more, then succeeds.
                        ("flaky", "2", 6) => Err(ReconcileError::new("not yet")),
                        ("invalid", _, _) => Err(ReconcileError::terminal("spec can never work")),
                        ("boom", _, 1) => panic!("reconciler bug"),
                        _ => Ok(Action::done()),
                    }
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    server.create(&own_cm("flaky", "1")).await.unwrap();
    eventually("flaky's success", Duration::from_secs(30), || {
        attempts.of("flaky").len() == 5
    })
    .await;
    assert_delays(&gaps(&attempts.of("flaky")), &[5, 10, 20, 40]);

    // The success forgot the failures: the next failure backs off from 5 ms again.
    server.put_own("flaky", "2").await.unwrap();
    eventually("flaky's second success", Duration::from_secs(30), || {
        attempts.of("flaky").len() == 7
    })
    .await;
    assert_delays(&gaps(&attempts.of("flaky")[5..]), &[5]);

    server.create(&own_cm("invalid", "1")).await.unwrap();
    server.create(&own_cm("boom", "1")).await.unwrap();
    eventually("boom's retry", Duration::from_secs(30), || {
        attempts.of("boom").len() == 2
    })
    .await;
    assert_delays(&gaps(&attempts.of("boom")), &[5]);
    // Long after (on a real server: after boom's retry, which came a first backoff step after
    // its panic, later than a retry of invalid's earlier error would have): the terminal error
    // was never retried.
    if on_simulator {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    assert_eq!(attempts.of("invalid").len(), 1);
    assert_eq!(attempts.of("boom").len(), 2);

    let stats = controller.stats();
    assert_eq!(stats.terminal_errors(), 1);
    assert_eq!(stats.panics(), 1);
    assert_eq!(stats.errors(), 6, "five flaky failures and one panic");
    assert_eq!(stats.successes(), 3);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn requeue_actions_follow_the_queue_rules() {
    if testkit::cluster::sim_only("virtual time: the requeue delays are asserted on the clock") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let attempts = Attempts::default();
    let seen = attempts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .max_concurrent_reconciles(3)
        .reconcile_timeout(Duration::from_secs(1))
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    let n = seen.record(req.name());
                    Ok::<_, ReconcileError>(match (req.name(), n) {
                        ("later", 1..=2) => Action::requeue_after(Duration::from_secs(7)),
                        ("again", 1..=3) => Action::requeue(),
                        ("slow", 1) => {
                            // Longer than the reconcile timeout: cancelled and retried.
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            Action::done()
                        }
                        _ => Action::done(),
                    })
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&cm("later", "1")).unwrap();
    server.create(&cm("again", "1")).unwrap();
    server.create(&cm("slow", "1")).unwrap();
    eventually("all settled", Duration::from_secs(60), || {
        attempts.of("later").len() == 3
            && attempts.of("again").len() == 4
            && attempts.of("slow").len() == 2
    })
    .await;
    // RequeueAfter waits exactly its delay each time (the backoff history is cleared).
    assert_backoff(&gaps(&attempts.of("later")), &[7000, 7000]);
    // Requeue backs off like an error.
    assert_backoff(&gaps(&attempts.of("again")), &[5, 10, 20]);
    // The timed-out reconcile was retried after the timeout plus the first backoff step.
    assert_backoff(&gaps(&attempts.of("slow")), &[1005]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn requeue_after_clears_the_backoff_history() {
    if testkit::cluster::sim_only("virtual time: the backoff delays are asserted on the clock") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let attempts = Attempts::default();
    let seen = attempts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    match seen.record(req.name()) {
                        1..=3 | 5 => Err(ReconcileError::new("not yet")),
                        4 => Ok(Action::requeue_after(Duration::from_secs(1))),
                        _ => Ok(Action::done()),
                    }
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&cm("a", "1")).unwrap();
    eventually("the success", Duration::from_secs(30), || {
        attempts.of("a").len() == 6
    })
    .await;
    // Three failures back off 5, 10, 20 ms; RequeueAfter waits its second and forgets them,
    // so the next failure backs off from 5 ms again (not 40 ms).
    assert_backoff(&gaps(&attempts.of("a")), &[5, 10, 20, 1000, 5]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// The default limiter is the max of the per-item exponential backoff and a 10 qps / burst 100
/// token bucket: when 150 keys fail at once, the first 100 retry after 5 ms, the other 50 are
/// spread at 10 per second.
#[tokio::test(start_paused = true)]
async fn the_default_limiter_caps_retries_at_ten_per_second_after_a_burst_of_100() {
    if testkit::cluster::sim_only("virtual time: the retry rate is asserted on the clock") {
        return;
    }
    const KEYS: usize = 150;
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    for i in 0..KEYS {
        put(&server, &format!("cm-{i}"), "0");
    }
    let manager = Arc::new(manager(&server).build());
    let attempts = Attempts::default();
    let seen = attempts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    match seen.record(req.name()) {
                        1 => Err(ReconcileError::new("fails once")),
                        _ => Ok(Action::done()),
                    }
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("every retry", Duration::from_secs(60), || {
        attempts.0.lock().len() == 2 * KEYS
    })
    .await;
    let all = attempts.0.lock().clone();
    let first_failure = all[0].1;
    let mut retries: Vec<Duration> = (0..KEYS)
        .map(|i| attempts.of(&format!("cm-{i}"))[1] - first_failure)
        .collect();
    retries.sort();
    // The burst: 100 retries right after their 5 ms backoff.
    assert!(retries[99] < Duration::from_millis(50), "{:?}", retries[99]);
    // Then one token per 100 ms: the last of the 50 others comes about 5 s later.
    assert!(
        retries[100] >= Duration::from_millis(90),
        "{:?}",
        retries[100]
    );
    let last = retries[KEYS - 1];
    assert!(
        last >= Duration::from_millis(4900) && last <= Duration::from_millis(5100),
        "{last:?}"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
