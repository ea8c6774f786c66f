//! A shutdown request stops intake and drains the in-flight reconcile; a second
//! request returns at once; a drain that outlasts the graceful timeout is cut off. Runs on the
//! simulator and, but for the 30 s default (asserted on the clock), with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, Request, Watch, reconciler_fn},
    manager::{Error, Manager},
};
use k8s_openapi::api::core::v1::ConfigMap;
use tokio_util::sync::CancellationToken;

/// The ConfigMaps the tests make (a whole cluster puts ConfigMaps of its own in the namespace,
/// which the controller passes over at once).
const OURS: [&str; 2] = ["a", "b"];

/// A controller whose reconcile of each of [`OURS`] takes `work` (of tokio time); returns how
/// many of those reconciles started and whether one finished.
fn slow_controller(manager: &Manager, work: Duration) -> (Arc<AtomicUsize>, Arc<AtomicBool>) {
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let (s, f) = (started.clone(), finished.clone());
    Controller::new(manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let (started, finished) = (s.clone(), f.clone());
                let ours = OURS.contains(&req.name());
                async move {
                    if !ours {
                        return Ok(Action::done());
                    }
                    started.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(work).await;
                    finished.store(true, Ordering::SeqCst);
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    (started, finished)
}

/// Starts `manager` with a [`slow_controller`] whose reconciles take an hour, creates ConfigMap
/// `a`, and waits until its reconcile has started. Returns whether a reconcile finished, and
/// the run.
async fn start_an_hour_long_reconcile(
    server: &TestCluster,
    manager: &Arc<Manager>,
) -> (Arc<AtomicBool>, tokio::task::JoinHandle<Result<(), Error>>) {
    let (started, finished) = slow_controller(manager, Duration::from_secs(3600));
    let running = spawn(manager);
    server.create(&cm("a", "1")).await.unwrap();
    eventually("the reconcile", Duration::from_secs(30), || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    (finished, running)
}

#[tokio::test(start_paused = true)]
async fn shutdown_drains_the_in_flight_reconcile() {
    let server = TestCluster::start().await.unwrap();
    let token = CancellationToken::new();
    let manager = Arc::new(manager(&server).shutdown_token(token.clone()).build());
    // Long enough to be in flight when the request comes; on a real server, in real seconds.
    let work = match server.sim() {
        Some(_) => Duration::from_secs(10),
        None => Duration::from_secs(1),
    };
    let (started, finished) = slow_controller(&manager, work);
    let running = spawn(&manager);
    server.create(&cm("a", "1")).await.unwrap();
    server.create(&cm("b", "1")).await.unwrap();
    eventually("the first reconcile", Duration::from_secs(30), || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;

    token.cancel();
    running.await.unwrap().unwrap();
    assert!(
        finished.load(Ordering::SeqCst),
        "the in-flight reconcile completed"
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        1,
        "no new reconcile after the request"
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_second_request_exits_at_once() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let (finished, running) = start_an_hour_long_reconcile(&server, &manager).await;

    let handle = manager.shutdown_handle();
    handle.shutdown();
    tokio::task::yield_now().await;
    assert!(
        !running.is_finished(),
        "the first request waits for the drain"
    );
    handle.shutdown();
    let result = tokio::time::timeout(Duration::from_secs(1), running)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(Error::ForcedShutdown)), "{result:?}");
    assert!(!finished.load(Ordering::SeqCst));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_drain_is_bounded_by_the_graceful_timeout() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(
        manager(&server)
            .graceful_shutdown_timeout(Duration::from_secs(5))
            .build(),
    );
    let (finished, running) = start_an_hour_long_reconcile(&server, &manager).await;

    manager.shutdown_handle().shutdown();
    let result = running.await.unwrap();
    assert!(
        matches!(result, Err(Error::ShutdownTimeout(_))),
        "{result:?}"
    );
    assert!(!finished.load(Ordering::SeqCst));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_drain_deadline_is_30_seconds_by_default() {
    if testkit::cluster::sim_only("virtual time: the 30 s default is asserted on the clock") {
        return;
    }
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let (finished, running) = start_an_hour_long_reconcile(&server, &manager).await;

    let requested = tokio::time::Instant::now();
    manager.shutdown_handle().shutdown();
    let result = running.await.unwrap();
    let drained_for = requested.elapsed();
    assert!(
        matches!(result, Err(Error::ShutdownTimeout(limit)) if limit == Duration::from_secs(30)),
        "{result:?}"
    );
    assert!(
        drained_for >= Duration::from_secs(30) && drained_for < Duration::from_secs(31),
        "drained for {drained_for:?}"
    );
    assert!(!finished.load(Ordering::SeqCst));
    server.shutdown().await;
}
