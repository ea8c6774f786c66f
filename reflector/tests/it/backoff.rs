//! 500 and 429 on list and watch — the backoff ladder grows, is full-jittered,
//! resets after two quiet minutes, and 429 on a watch rewatches while 500 relists.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use k8s_openapi::api::core::v1::ConfigMap;
use reflector::{
    BackoffStep, Error, ListParams, ListerWatcher, ObjectList, WatchParams, WatchStream,
};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The base delays of the recorded steps from `from` on.
fn bases(seen: &Seen, from: usize) -> Vec<Duration> {
    seen.backoffs.lock()[from..]
        .iter()
        .map(|s| s.base)
        .collect()
}

/// Every wait lies in `[base, 2·base)` (full jitter, factor 1.0).
fn assert_jittered(steps: &[BackoffStep]) {
    for step in steps {
        assert!(
            step.wait >= step.base && step.wait < step.base * 2,
            "{step:?}"
        );
    }
}

/// The gaps between consecutive calls are the reported backoff waits: tokio time is paused, so
/// a gap is the virtual time the reflector slept, plus the few milliseconds the clock may
/// advance while a request is in flight (far less than any step of the ladder).
fn assert_gaps_are_waits(calls: &[Call], steps: &[BackoffStep]) {
    assert_eq!(calls.len(), steps.len() + 1, "{calls:?} {steps:?}");
    for (pair, step) in calls.windows(2).zip(steps) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= step.wait && gap < step.wait + Duration::from_millis(200),
            "gap {gap:?}, wait {:?}",
            step.wait
        );
    }
}

#[tokio::test(start_paused = true)]
async fn list_and_watch_failures_back_off_along_the_ladder_and_reset_after_quiet_minutes() {
    if testkit::cluster::sim_only(
        "virtual time (the backoff ladder's waits measured, its reset after two quiet minutes)",
    ) {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    put(&server, "a", "0");
    let lw = config_maps(client_without_retry(&server));
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());

    // Four failed lists: 0.8, 1.6, 3.2, 6.4 s before the fifth, successful one.
    server.fail_next(FailRule::new("list", "configmaps", 500, 4));
    let running = spawn(lw.clone(), store.clone(), seen.options());
    converged(&server, &*store).await;
    assert_eq!(bases(&seen, 0), [0.8, 1.6, 3.2, 6.4].map(secs));
    assert_eq!(seen.codes(), [Some(500); 4]);
    assert_jittered(&seen.backoffs.lock());
    assert_gaps_are_waits(&lw.calls("list"), &seen.backoffs.lock());
    assert_eq!(server.request_count("list", "configmaps"), 5);

    // Two healthy minutes (and a bit) reset the ladder. 429 on the watch: back off and
    // rewatch, without a list — 0.8, 1.6, 3.2 s.
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(130)).await;
    let watches_before = lw.calls("watch").len();
    server.fail_next(FailRule::new("watch", "configmaps", 429, 3));
    server.drop_watches();
    eventually(
        "three throttled watches and a good one",
        Duration::from_secs(30),
        || lw.calls("watch").len() == watches_before + 4 && server.open_watches() == 1,
    )
    .await;
    assert_eq!(bases(&seen, 4), [0.8, 1.6, 3.2].map(secs));
    let steps: Vec<_> = seen.backoffs.lock()[4..].to_vec();
    assert_eq!(
        steps.iter().map(|s| s.attempt).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_jittered(&steps);
    assert_gaps_are_waits(&lw.calls("watch")[watches_before..], &steps);
    assert_eq!(
        server.request_count("list", "configmaps"),
        5,
        "429 rewatches"
    );
    assert_eq!(seen.codes()[4..], [Some(429); 3]);

    // Without two quiet minutes the ladder goes on: 500 on the watch relists after 6.4 s.
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.fail_next(FailRule::new("watch", "configmaps", 500, 1));
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        lw.calls("list").len() == 6
    })
    .await;
    assert_eq!(bases(&seen, 7), [secs(6.4)]);
    assert_eq!(seen.codes()[7..], [Some(500)]);
    put(&server, "b", "0");
    converged(&server, &*store).await;
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn throttled_lists_and_in_band_watch_errors_back_off_and_relist() {
    if testkit::cluster::sim_only("virtual time (the backoff ladder's waits measured)") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    put(&server, "a", "0");
    let lw = config_maps(client_without_retry(&server));
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());

    // 429 twice, then 500 once on the list.
    server.fail_next(FailRule::new("list", "configmaps", 429, 2));
    server.fail_next(FailRule::new("list", "configmaps", 500, 1));
    let running = spawn(lw.clone(), store.clone(), seen.options());
    converged(&server, &*store).await;
    assert_eq!(bases(&seen, 0), [0.8, 1.6, 3.2].map(secs));
    assert_eq!(seen.codes(), [Some(429), Some(429), Some(500)]);
    assert_gaps_are_waits(&lw.calls("list"), &seen.backoffs.lock());

    // An in-band 500 (ERROR event) surfaces its code and reason, ends the watch and relists
    // after the next step of the ladder.
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.fail_next(FailRule::new("watch", "configmaps", 500, 1).in_band());
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        lw.calls("list").len() == 5
    })
    .await;
    let last = seen.errors.lock().last().cloned().unwrap();
    assert_eq!(last.code, Some(500));
    assert!(last.reason.is_some_and(|r| !r.is_empty()));
    assert_eq!(bases(&seen, 3), [secs(6.4)]);
    converged(&server, &*store).await;
    running.stop().await;
}

/// Fails the first `failures` watch calls with "connection refused" (the server restarting).
struct Refusing {
    inner: Arc<Recorder<ConfigMap>>,
    failures: AtomicUsize,
}

#[async_trait::async_trait]
impl ListerWatcher<ConfigMap> for Refusing {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<ConfigMap>, Error> {
        self.inner.list(params).await
    }

    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<ConfigMap>, Error> {
        let refuse = self
            .failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if refuse {
            let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
            return Err(Error::Request {
                verb: "watch",
                source: kube::Error::Service(Box::new(io)),
            });
        }
        self.inner.watch(params, resource_version).await
    }
}

#[tokio::test(start_paused = true)]
async fn connection_refused_on_a_watch_backs_off_and_rewatches_without_relisting() {
    if testkit::cluster::sim_only("virtual time (the backoff ladder's steps before a rewatch)") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    put(&server, "a", "0");
    let recorder = config_maps(server.client().unwrap());
    let lw = Arc::new(Refusing {
        inner: recorder.clone(),
        failures: 2.into(),
    });
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw, store.clone(), seen.options());
    eventually("the watch", Duration::from_secs(30), || {
        server.open_watches() == 1
    })
    .await;
    put(&server, "b", "0");
    converged(&server, &*store).await;

    assert_eq!(bases(&seen, 0), [0.8, 1.6].map(secs));
    assert_eq!(recorder.calls("list").len(), 1, "rewatch, no relist");
    assert_eq!(
        recorder.calls("watch").len(),
        1,
        "the third attempt reached the server"
    );
    assert_eq!(seen.errors.lock().len(), 2);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_run_in_the_middle_of_a_backoff_wait() {
    if testkit::cluster::sim_only("virtual time (a shutdown 6.4 s into a backoff wait)") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    let lw = config_maps(client_without_retry(&server));
    let seen = Arc::new(Seen::default());
    server.fail_next(FailRule::new("list", "configmaps", 500, 100));
    let running = spawn(lw.clone(), Arc::new(cache()), seen.options());
    // Deep in the ladder: the fourth wait, at least 6.4 s, has begun.
    eventually("four failed lists", Duration::from_secs(60), || {
        seen.backoffs.lock().len() == 4
    })
    .await;
    let waiting = seen.backoffs.lock()[3];
    assert!(waiting.wait >= secs(6.4), "{waiting:?}");

    running.shutdown.cancel();
    // Paused time only moves to the earliest timer: had `run` waited out its backoff, this
    // timeout would fire first.
    tokio::time::timeout(Duration::from_millis(100), running.task)
        .await
        .expect("run returns at once")
        .unwrap();
    assert_eq!(lw.calls("list").len(), 4, "no list after the shutdown");
}
