//! `/readyz` answers 503 until the caches synced and 200 after;
//! `/healthz` answers 200; a failing user check turns a probe to 500 and names the check.

use crate::common;
use crate::metrics::get;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, Request, Watch, reconciler_fn},
    manager::Error,
};
use k8s_openapi::api::core::v1::ConfigMap;
use testkit::fault::InjectFaults;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_waits_for_sync_and_user_checks_fail_with_500() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.create(&cm("a", "1")).await.unwrap();
    // The initial lists fail until the faults are cleared, streaming (a watch) or paged: the
    // cache cannot sync.
    for verb in ["list", "watch"] {
        server
            .inject(FailRule::new(verb, "configmaps", 500, u32::MAX))
            .unwrap();
    }
    let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let manager = Arc::new(
        manager(&server)
            .health_probe_bind_address(localhost)
            .build(),
    );
    manager.cache().informers::<ConfigMap>().unwrap();
    let healthy = Arc::new(AtomicBool::new(true));
    let flag = healthy.clone();
    manager
        .add_healthz_check("database", move || {
            if flag.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("connection refused".to_owned())
            }
        })
        .unwrap();
    assert!(matches!(
        manager.add_healthz_check("database", || Ok(())),
        Err(Error::DuplicateCheck(_))
    ));
    let running = spawn(&manager);
    eventually("the probe listener", Duration::from_secs(10), || {
        manager.addresses().health_probes.is_some()
    })
    .await;
    let address = manager.addresses().health_probes.unwrap();
    assert_eq!(
        manager.addresses().metrics,
        None,
        "metrics are off by default"
    );

    let (status, body) = get(address, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("[-]informers failed"), "{body}");
    let (_, verbose) = get(address, "/readyz?verbose").await;
    assert!(
        verbose.contains("caches not synced yet: waiting for v1 ConfigMap"),
        "the check names the informer not synced: {verbose}"
    );
    assert_eq!(get(address, "/healthz").await.0, 200);
    assert_eq!(
        get(address, "/metrics").await.0,
        404,
        "no metrics on the probe address"
    );

    server.clear_faults();
    eventually("the caches", Duration::from_secs(30), || {
        manager.has_synced()
    })
    .await;
    let (status, body) = get(address, "/readyz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, body) = get(address, "/readyz?verbose").await;
    assert_eq!(status, 200);
    assert!(body.contains("[+]informers ok"), "{body}");

    healthy.store(false, Ordering::SeqCst);
    let (status, body) = get(address, "/healthz").await;
    assert_eq!(status, 500);
    assert!(
        body.contains("[-]database failed: connection refused"),
        "{body}"
    );
    assert!(body.contains("[+]ping ok"), "{body}");
    assert_eq!(get(address, "/healthz/ping").await.0, 200);
    assert_eq!(get(address, "/healthz/database").await.0, 500);
    assert_eq!(get(address, "/healthz/nope").await.0, 404);
    healthy.store(true, Ordering::SeqCst);
    assert_eq!(get(address, "/healthz").await.0, 200);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_serves_metrics_and_probes_and_a_failing_readyz_check_is_500() {
    let server = TestCluster::start().await.unwrap();
    // A fixed free port shared by both servers: bind port 0 once to find one.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = probe.local_addr().unwrap();
    drop(probe);
    let manager = Arc::new(
        manager(&server)
            .metrics_bind_address(address)
            .health_probe_bind_address(address)
            .build(),
    );
    manager
        .add_readyz_check("downstream", || Err("not reachable".to_owned()))
        .unwrap();
    Controller::new(&manager)
        // No ConfigMap of the test's: the reconcile counter stays at 0 (a whole cluster's root CA
        // ConfigMap is not reconciled).
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            |_req: Request, _ctx: Context<ConfigMap>| async {
                Ok::<_, std::convert::Infallible>(Action::done())
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("the listener", Duration::from_secs(10), || {
        manager.addresses().metrics.is_some()
    })
    .await;
    assert_eq!(manager.addresses().metrics, Some(address));
    assert_eq!(manager.addresses().health_probes, Some(address));
    eventually("the caches", Duration::from_secs(30), || {
        manager.has_synced()
    })
    .await;
    let (status, body) = get(address, "/readyz").await;
    assert_eq!(status, 500);
    assert!(
        body.contains("[-]downstream failed: not reachable"),
        "{body}"
    );
    let (status, body) = get(address, "/metrics").await;
    assert_eq!(status, 200);
    assert!(
        body.contains("# TYPE controller_runtime_reconcile_total counter"),
        "{body}"
    );
    assert!(
        body.contains(
            r#"controller_runtime_reconcile_total{controller="configmap",result="success"} 0"#
        ),
        "{body}"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_taken_address_fails_start() {
    let server = TestCluster::start().await.unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let manager = manager(&server)
        .metrics_bind_address(taken.local_addr().unwrap())
        .build();
    let error = manager.start().await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::Bind {
                what: "metrics",
                ..
            }
        ),
        "{error}"
    );
    // Dropped, not shut down: nothing connected to it.
    drop(server);
}
