//! The priority queue in a controller: the adds of the initial list and resyncs wait behind live
//! changes, requeues and retries keep their key's priority unless the action names another,
//! `workqueue_depth` carries the `priority` label, and the plain queue is one builder call away.
//! Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster: the
//! controllers see the tests' own ConfigMaps only ([`own_only`]).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use crate::on_both_storages;
use common::*;
use controller_runtime::cache::Storage;
use controller_runtime::{
    controller::{
        Action, Context, Controller, Priority, ReconcileError, Request, Watch, reconciler_fn,
    },
    manager::Manager,
};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use prometheus_parse::{Scrape, Value};
use tokio::sync::Semaphore;

const LIMIT: Duration = Duration::from_secs(60);

/// Reconciles seen, in order: the key's name and the priority it came with.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, i32)>>>);

impl Seen {
    fn record(&self, request: &Request, priority: Priority) {
        self.0
            .lock()
            .push((request.name().to_owned(), priority.get()));
    }

    fn all(&self) -> Vec<(String, i32)> {
        self.0.lock().clone()
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }
}

/// A reconciler that records each reconcile, then waits for a permit of `gate`.
fn gated(
    seen: &Seen,
    gate: &Arc<Semaphore>,
) -> impl controller_runtime::controller::Reconciler<ConfigMap> {
    let (seen, gate) = (seen.clone(), Arc::clone(gate));
    reconciler_fn(move |request: Request, ctx: Context<ConfigMap>| {
        seen.record(&request, ctx.priority());
        let gate = Arc::clone(&gate);
        async move {
            if let Ok(permit) = gate.acquire().await {
                permit.forget();
            }
            Ok::<_, ReconcileError>(Action::done())
        }
    })
}

/// The value of `workqueue_depth` of controller `name` at `priority`, if the series exists.
fn depth(manager: &Manager, name: &str, priority: &str) -> Option<f64> {
    let text = manager.metrics().render();
    let scrape = Scrape::parse(text.lines().map(|line| Ok(line.to_owned()))).ok()?;
    scrape
        .samples
        .iter()
        .find(|sample| {
            sample.metric == "workqueue_depth"
                && sample.labels.get("name") == Some(name)
                && sample.labels.get("controller") == Some(name)
                && sample.labels.get("priority") == Some(priority)
        })
        .and_then(|sample| match sample.value {
            Value::Gauge(value) => Some(value),
            _ => None,
        })
}

on_both_storages!(live_changes_overtake_the_initial_list, start_paused = true);

/// Twenty config maps listed at start, one worker held on its first reconcile, then a config
/// map created live: with the priority queue it is reconciled right after the first.
async fn live_changes_overtake_the_initial_list(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    for i in 0..20 {
        server
            .create(&own_cm(&format!("listed-{i:02}"), "1"))
            .await
            .unwrap();
    }
    let manager = Arc::new(manager(&server).default_storage(storage).build());
    let (seen, gate) = (Seen::default(), Arc::new(Semaphore::new(0)));
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .named("prio")
        .build(gated(&seen, &gate))
        .unwrap();
    let running = spawn(&manager);

    eventually("the first reconcile", LIMIT, || seen.len() == 1).await;
    assert_eq!(depth(&manager, "prio", "-100"), Some(19.0));
    server.create(&own_cm("live", "1")).await.unwrap();
    eventually("the live change queued at normal priority", LIMIT, || {
        depth(&manager, "prio", "0") == Some(1.0)
    })
    .await;
    gate.add_permits(1000);
    eventually("every reconcile", LIMIT, || seen.len() == 21).await;

    let all = seen.all();
    assert_eq!(all[1], ("live".to_owned(), 0), "{all:?}");
    assert_eq!(all[0].1, -100);
    let listed: Vec<&(String, i32)> = all.iter().filter(|(name, _)| name != "live").collect();
    assert_eq!(listed.len(), 20);
    assert!(
        listed.iter().all(|(_, priority)| *priority == -100),
        "{all:?}"
    );
    assert_eq!(depth(&manager, "prio", "-100"), Some(0.0));
    assert_eq!(depth(&manager, "prio", "0"), Some(0.0));
    assert_eq!(depth(&manager, "prio", ""), None);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// The same with `priority_queue(false)`: first in, first out, every key at normal priority,
/// and the depth series labelled `priority=""`.
#[tokio::test(start_paused = true)]
async fn the_plain_queue_keeps_first_in_first_out() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..5 {
        server
            .create(&own_cm(&format!("listed-{i}"), "1"))
            .await
            .unwrap();
    }
    let manager = Arc::new(manager(&server).build());
    let (seen, gate) = (Seen::default(), Arc::new(Semaphore::new(0)));
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .named("fifo")
        .priority_queue(false)
        .build(gated(&seen, &gate))
        .unwrap();
    let running = spawn(&manager);

    eventually("the first reconcile", LIMIT, || seen.len() == 1).await;
    assert_eq!(depth(&manager, "fifo", ""), Some(4.0));
    server.create(&own_cm("live", "1")).await.unwrap();
    eventually("the live change queued", LIMIT, || {
        depth(&manager, "fifo", "") == Some(5.0)
    })
    .await;
    gate.add_permits(1000);
    eventually("every reconcile", LIMIT, || seen.len() == 6).await;

    let all = seen.all();
    assert_eq!(all[5], ("live".to_owned(), 0), "{all:?}");
    assert!(all.iter().all(|(_, priority)| *priority == 0), "{all:?}");
    assert_eq!(depth(&manager, "fifo", "0"), None);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

on_both_storages!(
    resyncs_come_at_low_priority_and_updates_at_normal,
    start_paused = true
);

/// After the initial list, an update is a live change (normal priority) and a resync (same
/// resourceVersion) is not (low priority).
async fn resyncs_come_at_low_priority_and_updates_at_normal(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    for name in ["a", "b", "c"] {
        server.create(&own_cm(name, "1")).await.unwrap();
    }
    // Ten minutes of the simulator's paused clock; a real server's informer resyncs every
    // second instead, so resyncs may come before the update as well.
    let period = match server.sim() {
        Some(_) => Duration::from_secs(600),
        None => Duration::from_secs(1),
    };
    let manager = Arc::new(
        manager(&server)
            .default_storage(storage)
            .resync_period(period)
            .build(),
    );
    let seen = Seen::default();
    let gate = Arc::new(Semaphore::new(1000));
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(gated(&seen, &gate))
        .unwrap();
    let running = spawn(&manager);

    eventually("the initial reconciles", LIMIT, || seen.len() >= 3).await;
    server.put_own("b", "2").await.unwrap();
    // The update's reconcile, then (within a resync period plus the informer's jitter) a
    // resync of every key.
    eventually(
        "the update's reconcile and the resyncs after it",
        Duration::from_secs(1800),
        || {
            let all = seen.all();
            all.iter()
                .position(|(name, priority)| name == "b" && *priority == 0)
                .is_some_and(|at| {
                    ["a", "b", "c"]
                        .iter()
                        .all(|key| all[at + 1..].iter().any(|(name, _)| name == key))
                })
        },
    )
    .await;
    let all = seen.all();
    assert!(
        all[..3].iter().all(|(_, priority)| *priority == -100),
        "the initial list: {all:?}"
    );
    let normal: Vec<&(String, i32)> = all
        .iter()
        .filter(|(_, priority)| *priority != -100)
        .collect();
    assert_eq!(normal, [&("b".to_owned(), 0)], "only the update: {all:?}");

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// A key keeps the priority it was handed out with through errors and requeues, until an
/// action names another priority, which it then keeps.
#[tokio::test(start_paused = true)]
async fn requeues_and_retries_keep_their_priority_unless_the_action_names_one() {
    let server = TestCluster::start().await.unwrap();
    server.create(&own_cm("listed", "1")).await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen = Seen::default();
    let recorded = seen.clone();
    let urgent = Priority::new(7).unwrap();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |request: Request, ctx: Context<ConfigMap>| {
                recorded.record(&request, ctx.priority());
                let attempt = recorded
                    .all()
                    .iter()
                    .filter(|(name, _)| name == request.name())
                    .count();
                async move {
                    match attempt {
                        1 => Err(ReconcileError::new("not yet")),
                        2 => Ok(Action::requeue_after(Duration::from_secs(1))),
                        3 => Ok(Action::requeue().with_priority(urgent)),
                        4 => Ok(Action::requeue_after(Duration::from_secs(1))),
                        _ => Ok(Action::done()),
                    }
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    eventually("the listed key's five reconciles", LIMIT, || {
        seen.all()
            .iter()
            .filter(|(name, _)| name == "listed")
            .count()
            == 5
    })
    .await;
    server.create(&own_cm("live", "1")).await.unwrap();
    eventually("the live key's five reconciles", LIMIT, || {
        seen.all().iter().filter(|(name, _)| name == "live").count() == 5
    })
    .await;
    let priorities = |key: &str| -> Vec<i32> {
        seen.all()
            .into_iter()
            .filter(|(name, _)| name == key)
            .map(|(_, priority)| priority)
            .collect()
    };
    assert_eq!(priorities("listed"), [-100, -100, -100, 7, 7]);
    assert_eq!(priorities("live"), [0, 0, 0, 7, 7]);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
