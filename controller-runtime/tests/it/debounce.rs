//! Debounce: a burst of events for one key becomes one reconcile (of the latest state, with the
//! highest priority among the events), and a key whose events never pause is still reconciled
//! within the maximum wait. The burst runs with `KUBE_RT_TEST_KUBECONFIG` set against that
//! cluster too (its quiet time in real seconds, not asserted on the clock there); the maximum
//! wait is asserted on the simulator's clock only.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::{
    ObjectKey,
    controller::{Action, Context, Controller, KeyStream, Priority, Request, Watch, reconciler_fn},
};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// One reconcile: the config map's value then (if any), the key's priority, and when (tokio
/// time).
type Reconcile = (Option<String>, i32, Instant);

/// Reconciles seen, by key name.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, Reconcile)>>>);

impl Seen {
    fn reconciler(&self) -> impl controller_runtime::controller::Reconciler<ConfigMap> {
        let seen = self.clone();
        reconciler_fn(move |request: Request, ctx: Context<ConfigMap>| {
            let value = ctx.get().map(|config| testkit::config_maps::value(&config));
            seen.0.lock().push((
                request.name().to_owned(),
                (value, ctx.priority().get(), Instant::now()),
            ));
            async { Ok::<_, Infallible>(Action::done()) }
        })
    }

    fn of(&self, name: &str) -> Vec<Reconcile> {
        self.0
            .lock()
            .iter()
            .filter(|(seen, _)| seen == name)
            .map(|(_, reconcile)| reconcile.clone())
            .collect()
    }
}

/// A stream of the keys sent on a channel, and its sender.
fn channel() -> (
    mpsc::UnboundedSender<ObjectKey>,
    impl futures::Stream<Item = ObjectKey> + Send + 'static,
) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|key| (key, receiver))
    });
    (sender, stream)
}

/// Keeps tokio's paused clock from jumping further than 10 ms at a time while the test waits
/// for loopback I/O (it jumps to the next timer when the runtime only waits for I/O, and the
/// next timer would otherwise be the debouncer's).
fn ticking_clock() -> tokio::task::JoinHandle<()> {
    tokio::spawn(async {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_updates_is_reconciled_once_with_the_latest_state() {
    let server = TestCluster::start().await.unwrap();
    let on_simulator = server.sim().is_some();
    // On the simulator a minute of quiet, the updates ten seconds apart (of its paused clock);
    // on a real server three real seconds, the updates one right after the other.
    let (quiet, gap) = match on_simulator {
        true => (Duration::from_secs(60), Duration::from_secs(10)),
        false => (Duration::from_secs(3), Duration::ZERO),
    };
    let manager = Arc::new(manager(&server).build());
    let seen = Seen::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .debounce(quiet, Duration::from_secs(600))
        .build(seen.reconciler())
        .unwrap();
    let running = spawn(&manager);
    eventually("the caches", Duration::from_secs(30), || {
        manager
            .cache()
            .informers::<ConfigMap>()
            .unwrap()
            .remove(0)
            .has_synced()
    })
    .await;

    // Four updates `gap` apart: never a pause of `quiet`.
    let ticker = ticking_clock();
    server.create(&own_cm("bursty", "0")).await.unwrap();
    for value in 1..=4 {
        tokio::time::sleep(gap).await;
        server.put_own("bursty", &value.to_string()).await.unwrap();
    }
    let last = Instant::now();
    let informer = manager.cache().informers::<ConfigMap>().unwrap().remove(0);
    let key = ObjectKey::namespaced(ns(), "bursty").unwrap();
    eventually(
        "the last update in the cache",
        Duration::from_secs(30),
        || {
            informer
                .indexer()
                .get_by_key(&key)
                .is_some_and(|config| testkit::config_maps::value(&config) == "4")
        },
    )
    .await;
    if on_simulator {
        // Time for the handler to get the last notification (of the paused clock).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ticker.abort();
    assert!(seen.of("bursty").is_empty(), "{:?}", seen.of("bursty"));

    eventually("the reconcile", Duration::from_secs(600), || {
        !seen.of("bursty").is_empty()
    })
    .await;
    // Nothing more comes: a sentinel created after the reconcile is reconciled a quiet time
    // later, and a second reconcile of the burst would have been held no longer.
    server.create(&own_cm("sentinel", "0")).await.unwrap();
    eventually("the sentinel's reconcile", Duration::from_secs(600), || {
        !seen.of("sentinel").is_empty()
    })
    .await;
    let reconciles = seen.of("bursty");
    assert_eq!(reconciles.len(), 1, "{reconciles:?}");
    let (value, priority, at) = reconciles[0].clone();
    assert_eq!(value.as_deref(), Some("4"));
    assert_eq!(priority, 0);
    if on_simulator {
        // A quiet time after the last event (which reached the debouncer within 100 ms).
        let after_last = at - last;
        assert!(
            after_last >= quiet && after_last < quiet + Duration::from_secs(1),
            "reconciled {after_last:?} after the last update"
        );
    }

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_key_whose_events_never_pause_is_reconciled_within_the_maximum_wait() {
    if testkit::cluster::sim_only("virtual time: the maximum wait is asserted on the clock") {
        return;
    }
    let (quiet, max_wait) = (Duration::from_secs(1), Duration::from_millis(3200));
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen = Seen::default();
    let (low, low_keys) = channel();
    let (high, high_keys) = channel();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .debounce(quiet, max_wait)
        .watches_stream(KeyStream::new(low_keys).priority(Priority::new(-100).unwrap()))
        .watches_stream(KeyStream::new(high_keys).priority(Priority::new(9).unwrap()))
        .build(seen.reconciler())
        .unwrap();
    let running = spawn(&manager);
    eventually("the caches", Duration::from_secs(30), || {
        manager
            .cache()
            .informers::<ConfigMap>()
            .unwrap()
            .remove(0)
            .has_synced()
    })
    .await;

    // One event every half second for ten seconds: never a pause of `quiet`.
    let key = ObjectKey::namespaced(NS, "busy").unwrap();
    let first = Instant::now();
    for i in 0..20 {
        let source = if i == 3 { &high } else { &low };
        source.send(key.clone()).unwrap();
        tokio::time::sleep(quiet / 2).await;
    }
    // Then a pause: one last reconcile, a quiet time after the last event.
    tokio::time::sleep(Duration::from_secs(60)).await;

    let reconciles = seen.of("busy");
    let offsets: Vec<Duration> = reconciles.iter().map(|(_, _, at)| *at - first).collect();
    // Held at most `max_wait` from the first event of each hold: 0 s → 3.2 s, then 3.5 s →
    // 6.7 s, then 7 s → 10.2 s (the last event, at 9.5 s, would have allowed 10.5 s).
    let expected = [3.2, 6.7, 10.2];
    assert_eq!(offsets.len(), expected.len(), "{offsets:?}");
    for (offset, expected) in offsets.iter().zip(expected) {
        let late = offset.as_secs_f64() - expected;
        assert!((0.0..0.1).contains(&late), "{offsets:?}");
    }
    // The first hold included the event of the high-priority source: it keeps its priority.
    let priorities: Vec<i32> = reconciles
        .iter()
        .map(|(_, priority, _)| *priority)
        .collect();
    assert_eq!(priorities, [9, -100, -100]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
}
