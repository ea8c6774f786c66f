//! Graceful shutdown with real signals (they reach the whole process, so this runs last):
//! SIGTERM starts a graceful shutdown that drains the in-flight reconcile; a second signal
//! (SIGINT) during the drain makes `start` return at once.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, Request, Watch, reconciler_fn},
    manager::{Error, Manager},
};
use k8s_openapi::api::core::v1::ConfigMap;

fn signal_self(signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(std::process::id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

pub(crate) async fn a_second_signal_exits_at_once() {
    if testkit::cluster::sim_only("private instance") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(Manager::builder(server.client().unwrap()).build());
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |_req: Request, _ctx: Context<ConfigMap>| {
                let started = s.clone();
                async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    // Never finishes on its own.
                    std::future::pending::<()>().await;
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&cm("a", "1")).unwrap();
    eventually("the reconcile", Duration::from_secs(30), || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;

    signal_self("TERM");
    eventually("the shutdown request", Duration::from_secs(30), || {
        manager.shutdown_handle().is_shutting_down()
    })
    .await;
    assert!(
        !running.is_finished(),
        "the first signal waits for the drain"
    );
    signal_self("INT");
    let result = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(Error::ForcedShutdown)), "{result:?}");
    server.shutdown().await;
}
