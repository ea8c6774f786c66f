//! The last state of a deleted object reaches the reconciler; and reading one's own writes
//! (now staleness mitigation, see `staleness.rs`) holds while the watch is delayed — a
//! reconciler that increments a counter in the object it reconciles never reads a value older
//! than its own last write, and a key whose cache never catches up is reconciled anyway after
//! the bound. Runs on the simulator and, but for the five-second bound (asserted on the clock),
//! with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster (through a fault proxy where the
//! test injects faults).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::on_both_storages;
use apiserver_sim::FailRule;
use common::*;
use controller_runtime::cache::Storage;
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use controller_runtime::indexer::compact::Compact;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::DeleteParams;
use parking_lot::Mutex;
use testkit::fault::InjectFaults;

fn value(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref()?.get("v").cloned()
}

/// The last states the reconciler found for deleted objects (from its context), in order.
type LastStates = Arc<Mutex<Vec<Option<String>>>>;

/// Starts `manager` with a ConfigMap controller whose reconciler records, whenever its object is
/// gone, the last state the context offers; then writes ConfigMap `gone` twice ("first", then
/// "last") and waits until the cache holds "last". Returns the recorded states and the run.
async fn run_until_gone_is_cached_at_last(
    server: &TestCluster,
    manager: &Arc<controller_runtime::manager::Manager>,
) -> (
    LastStates,
    tokio::task::JoinHandle<Result<(), controller_runtime::manager::Error>>,
) {
    let last_states = LastStates::default();
    let seen = last_states.clone();
    Controller::new(manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    if ctx.get().is_none() {
                        seen.lock().push(ctx.deleted().and_then(|cm| value(&cm)));
                    }
                    Ok::<_, ReconcileError>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(manager);
    server.create(&own_cm("gone", "first")).await.unwrap();
    server.put_own("gone", "last").await.unwrap();
    let key = format!("{}/gone", ns()).parse().unwrap();
    eventually("the update", Duration::from_secs(30), || {
        manager
            .cache()
            .get::<ConfigMap>(&key)
            .unwrap()
            .is_some_and(|cm| value(&cm).as_deref() == Some("last"))
    })
    .await;
    (last_states, running)
}

on_both_storages!(
    the_deleted_objects_last_state_reaches_the_reconciler,
    start_paused = true
);

async fn the_deleted_objects_last_state_reaches_the_reconciler(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).default_storage(storage).build());
    let (last_states, running) = run_until_gone_is_cached_at_last(&server, &manager).await;
    server
        .delete("", "configmaps", Some(ns()), "gone")
        .await
        .unwrap();
    eventually("the deleted reconcile", Duration::from_secs(30), || {
        !last_states.lock().is_empty()
    })
    .await;
    assert_eq!(*last_states.lock(), [Some("last".to_owned())]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// The value of `workqueue_adds_total` for `queue` in `metrics`' text.
fn queue_adds(metrics: &str, queue: &str) -> Option<u64> {
    let series = format!("name=\"{queue}\"");
    metrics
        .lines()
        .find(|line| line.starts_with("workqueue_adds_total{") && line.contains(&series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

on_both_storages!(a_deletion_seen_during_a_reconcile_reaches_the_next_one);

/// An object deleted while a reconcile of it (still live when it started) runs: the delete
/// event's last state waits for the next reconcile, which must get it from its context. The
/// first reconcile returns only once the controller's delete handler has run (it re-added the
/// key: the queue's second add), so the state is recorded before that reconcile ends.
async fn a_deletion_seen_during_a_reconcile_reaches_the_next_one(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).default_storage(storage).build());
    let last_states = LastStates::default();
    let seen = last_states.clone();
    let metrics = manager.metrics().clone();
    let config_maps: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    Controller::new(&manager)
        // The test's ConfigMap only: the queue's adds below are its own (a whole cluster puts its
        // root CA ConfigMap into the namespace too).
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (seen, metrics, config_maps) =
                    (seen.clone(), metrics.clone(), config_maps.clone());
                async move {
                    if ctx.get().is_none() {
                        seen.lock().push(ctx.deleted().and_then(|cm| value(&cm)));
                        return Ok::<_, ReconcileError>(Action::done());
                    }
                    config_maps
                        .delete("doomed", &DeleteParams::default())
                        .await
                        .unwrap();
                    eventually("the delete handler", Duration::from_secs(30), || {
                        queue_adds(&metrics.render(), "configmap") == Some(2)
                    })
                    .await;
                    Ok(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&own_cm("doomed", "final")).await.unwrap();
    eventually("the deleted reconcile", Duration::from_secs(30), || {
        !last_states.lock().is_empty()
    })
    .await;
    assert_eq!(*last_states.lock(), [Some("final".to_owned())]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

const TARGET: i64 = 20;
const DELAY_AT: i64 = 5;

on_both_storages!(
    a_reconciler_never_reads_older_than_its_own_write,
    start_paused = true
);

async fn a_reconciler_never_reads_older_than_its_own_write(storage: Storage) {
    let server = Arc::new(TestCluster::start_with_faults().await.unwrap());
    server.create(&own_cm("counter", "0")).await.unwrap();
    let manager = Arc::new(manager(&server).default_storage(storage).build());
    let written = Arc::new(AtomicI64::new(0));
    let stale_reads = Arc::new(AtomicUsize::new(0));
    let (w, stale, s) = (written.clone(), stale_reads.clone(), server.clone());
    let controller = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .read_your_writes_timeout(Duration::from_secs(60))
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (written, stale, server) = (w.clone(), stale.clone(), s.clone());
                async move {
                    let Some(cached) = ctx.get() else {
                        return Ok(Action::done());
                    };
                    let count: i64 = value(&cached).unwrap_or_default().parse()?;
                    if count < written.load(Ordering::SeqCst) {
                        stale.fetch_add(1, Ordering::SeqCst);
                    }
                    if count >= TARGET {
                        return Ok(Action::done());
                    }
                    if count == DELAY_AT {
                        // The watch goes down and its first re-watches fail: the informer lags
                        // behind the write below for seconds.
                        server
                            .inject(FailRule::new("watch", "configmaps", 500, 2))
                            .expect("a status fault is valid on either server");
                        server.drop_watches();
                    }
                    let mut next = (*cached).clone();
                    next.data = Some([("v".to_owned(), (count + 1).to_string())].into());
                    ctx.replace(&next).await?;
                    written.store(count + 1, Ordering::SeqCst);
                    Ok::<_, ReconcileError>(Action::requeue_after(Duration::from_millis(1)))
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    testkit::eventually_async("the counter", Duration::from_secs(120), || async {
        let all = server.list::<ConfigMap>().await.unwrap();
        let counter = all.iter().find(|cm| is_own_meta(&cm.metadata));
        counter.and_then(value) == Some(TARGET.to_string())
    })
    .await;
    eventually("the last reconcile", Duration::from_secs(60), || {
        controller.stats().successes() >= 1
    })
    .await;
    assert_eq!(
        stale_reads.load(Ordering::SeqCst),
        0,
        "a reconcile read a value older than its own write"
    );
    assert_eq!(
        controller.stats().errors(),
        0,
        "no write conflicted with a stale read"
    );
    assert!(
        server.request_count("watch", "configmaps") >= 3,
        "the watch was delayed"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
}

on_both_storages!(
    a_deletion_missed_during_a_watch_gap_reaches_the_reconciler_from_its_tombstone,
    start_paused = true
);

async fn a_deletion_missed_during_a_watch_gap_reaches_the_reconciler_from_its_tombstone(
    storage: Storage,
) {
    let server = TestCluster::start_with_faults().await.unwrap();
    let manager = Arc::new(manager(&server).default_storage(storage.clone()).build());
    // Tells whether the primary informer saw the deletion as a tombstone (the path under test).
    let tombstones = Arc::new(AtomicUsize::new(0));
    let t = tombstones.clone();
    let cache = manager.cache();
    let _probe = if storage.is_compact() {
        let informer = cache.compact_informers::<ConfigMap>().unwrap().remove(0);
        informer.add_event_handler(informer::handler().on_delete(
            move |deleted: informer::DeletedObject<Compact<ConfigMap>>| {
                if deleted.is_tombstone() {
                    t.fetch_add(1, Ordering::SeqCst);
                }
            },
        ))
    } else {
        let informer = cache.informers::<ConfigMap>().unwrap().remove(0);
        informer.add_event_handler(informer::handler().on_delete(
            move |deleted: informer::DeletedObject<ConfigMap>| {
                if deleted.is_tombstone() {
                    t.fetch_add(1, Ordering::SeqCst);
                }
            },
        ))
    }
    .unwrap();
    let (last_states, running) = run_until_gone_is_cached_at_last(&server, &manager).await;
    // Every re-watch fails until the deletion is made and the history compacted: the informer
    // cannot see the deletion as an event; its next re-watch gets 410 and it relists, so the
    // deletion is only inferred.
    server
        .inject(FailRule::random("watch", "configmaps", 500, 1.0, 1))
        .expect("a status fault is valid on either server");
    server.drop_watches();
    server
        .delete("", "configmaps", Some(ns()), "gone")
        .await
        .unwrap();
    server.compact().await.unwrap();
    server.clear_faults();
    eventually("the deleted reconcile", Duration::from_secs(60), || {
        !last_states.lock().is_empty()
    })
    .await;
    assert_eq!(tombstones.load(Ordering::SeqCst), 1, "a tombstone was seen");
    assert_eq!(*last_states.lock(), [Some("last".to_owned())]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_key_stale_for_its_own_write_is_reconciled_anyway_after_five_seconds_by_default() {
    if testkit::cluster::sim_only("virtual time: the five-second bound is asserted on the clock") {
        return;
    }
    let server = Arc::new(apiserver_sim::ApiServer::start().await.unwrap());
    server.create(&cm("counter", "0")).unwrap();
    let manager = Arc::new(manager(&server).build());
    // (cached value, when the reconcile started or its write returned)
    let starts = Arc::new(Mutex::new(Vec::new()));
    let written_at = Arc::new(Mutex::new(None));
    let (st, w, s) = (starts.clone(), written_at.clone(), server.clone());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (starts, written_at, server) = (st.clone(), w.clone(), s.clone());
                async move {
                    let Some(cached) = ctx.get() else {
                        return Ok(Action::done());
                    };
                    let count = value(&cached).unwrap_or_default();
                    starts
                        .lock()
                        .push((count.clone(), tokio::time::Instant::now()));
                    if count != "0" || written_at.lock().is_some() {
                        return Ok(Action::done());
                    }
                    // The informer never catches up: every watch and list fails from now on.
                    server.fail_next(FailRule::new("watch", "configmaps", 500, 100_000));
                    server.fail_next(FailRule::new("list", "configmaps", 500, 100_000));
                    server.drop_watches();
                    let mut next = (*cached).clone();
                    next.data = Some([("v".to_owned(), "1".to_owned())].into());
                    ctx.replace(&next).await?;
                    *written_at.lock() = Some(tokio::time::Instant::now());
                    Ok::<_, ReconcileError>(Action::requeue_after(Duration::from_millis(1)))
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually(
        "the reconcile after the write",
        Duration::from_secs(60),
        || starts.lock().len() == 2,
    )
    .await;
    let written_at = written_at.lock().unwrap();
    let (cached, started) = starts.lock()[1].clone();
    let waited = started - written_at;
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_millis(5100),
        "waited {waited:?}"
    );
    assert_eq!(
        cached, "0",
        "the cache never caught up: the reconcile ran anyway"
    );

    server.clear_faults();
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
}
