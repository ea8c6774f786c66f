//! With 8 workers and 500 objects updated repeatedly, no key is ever reconciled
//! by two workers at once, and every object's final state is reconciled after its last change.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::sync::watch;

const OBJECTS: usize = 500;
const ROUNDS: usize = 5;
const HOT_KEYS: usize = 4;
const HOT_ROUNDS: usize = 40;

#[derive(Default)]
struct Observed {
    in_flight: Mutex<HashSet<String>>,
    overlaps: AtomicUsize,
    max_parallel: AtomicUsize,
    /// Per key: the last value a reconcile read from the cache.
    last_seen: Mutex<BTreeMap<String, String>>,
    /// Reconciles take 20 ms instead of 3 ms.
    slow: AtomicBool,
    /// The first reconcile waits for another to run beside it; set by the first that does.
    beside_first: watch::Sender<bool>,
    /// Whether the first reconcile has begun (and so waits).
    first_begun: AtomicBool,
}

#[tokio::test(start_paused = true)]
async fn keys_never_overlap_and_final_states_are_reconciled() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let observed = Arc::new(Observed::default());
    let seen = observed.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .max_concurrent_reconciles(8)
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    let key = req.to_string();
                    let parallel = {
                        let mut in_flight = seen.in_flight.lock();
                        if !in_flight.insert(key.clone()) {
                            seen.overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        seen.max_parallel
                            .fetch_max(in_flight.len(), Ordering::SeqCst);
                        in_flight.len()
                    };
                    if parallel > 1 {
                        seen.beside_first.send_replace(true);
                    }
                    // The very first reconcile holds its worker until another key's reconcile
                    // runs beside it: the workers' parallelism then shows however the server
                    // paces the events (with the clock paused, a reconcile's sleep ends as soon
                    // as the runtime waits for a slow server).
                    if !seen.first_begun.swap(true, Ordering::SeqCst) {
                        let mut beside = seen.beside_first.subscribe();
                        // The sender lives in `seen`, so the wait ends only when it turns true.
                        let _ = beside.wait_for(|&started| started).await;
                    }
                    // Some work, so reconciles of different keys overlap.
                    let work = if seen.slow.load(Ordering::SeqCst) {
                        20
                    } else {
                        3
                    };
                    tokio::time::sleep(Duration::from_millis(work)).await;
                    let value = ctx
                        .get()
                        .and_then(|cm| cm.data.clone())
                        .and_then(|data| data.get("v").cloned());
                    if let Some(value) = value {
                        seen.last_seen.lock().insert(req.name().to_owned(), value);
                    }
                    seen.in_flight.lock().remove(&key);
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    for round in 0..ROUNDS {
        for i in 0..OBJECTS {
            server
                .put(&format!("cm-{i}"), &round.to_string())
                .await
                .unwrap();
        }
        // Let the controller work while the next round of writes comes in.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let last = (ROUNDS - 1).to_string();
    eventually(
        "every final state reconciled",
        Duration::from_secs(120),
        || {
            let seen = observed.last_seen.lock();
            seen.len() == OBJECTS && seen.values().all(|value| *value == last)
        },
    )
    .await;
    let parallel = observed.max_parallel.load(Ordering::SeqCst);
    assert!(parallel > 1 && parallel <= 8, "parallelism {parallel}");

    // Hot keys: a few objects change every 5 ms while their 20 ms reconciles run and most
    // workers are idle, so each is queued again while in flight.
    observed.slow.store(true, Ordering::SeqCst);
    for round in 0..HOT_ROUNDS {
        for i in 0..HOT_KEYS {
            server
                .put(&format!("cm-{i}"), &format!("hot-{round}"))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let last_hot = format!("hot-{}", HOT_ROUNDS - 1);
    eventually(
        "every hot key's final state reconciled",
        Duration::from_secs(60),
        || {
            let seen = observed.last_seen.lock();
            (0..HOT_KEYS).all(|i| seen.get(&format!("cm-{i}")) == Some(&last_hot))
        },
    )
    .await;
    assert_eq!(
        observed.overlaps.load(Ordering::SeqCst),
        0,
        "a key was reconciled concurrently"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn one_worker_by_default() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..20 {
        server.put(&format!("cm-{i}"), "0").await.unwrap();
    }
    let manager = Arc::new(manager(&server).build());
    let observed = Arc::new(Observed::default());
    let seen = observed.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    let in_flight = {
                        let mut in_flight = seen.in_flight.lock();
                        in_flight.insert(req.to_string());
                        in_flight.len()
                    };
                    seen.max_parallel.fetch_max(in_flight, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    seen.in_flight.lock().remove(&req.to_string());
                    seen.last_seen
                        .lock()
                        .insert(req.name().to_owned(), String::new());
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("every object reconciled", Duration::from_secs(30), || {
        observed.last_seen.lock().len() == 20
    })
    .await;
    assert_eq!(observed.max_parallel.load(Ordering::SeqCst), 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
