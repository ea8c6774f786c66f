//! The webhook server in a manager: started before the caches sync (a conversion webhook may be
//! needed to list), `/readyz` including it, its metrics on the manager's `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use controller_runtime::manager::Error;
use controller_runtime::webhook::{
    AdmissionRequest, AdmissionResponse, Webhook, WebhookServer, admission_fn,
};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;
use testkit::fault::InjectFaults;

use super::support::{TestCa, config_map, request_tls, review, test_config};
use crate::common::*;
use crate::metrics::get;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_serves_webhooks_before_its_caches_sync_and_reports_them() {
    let server = TestCluster::start_with_faults().await.unwrap();
    // The caches cannot sync until the faults are cleared: their lists fail, streaming (a
    // watch) or paged.
    for verb in ["list", "watch"] {
        server
            .inject(FailRule::new(verb, "configmaps", 500, u32::MAX))
            .unwrap();
    }
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    ca.issue(dir.path(), "webhook-1");
    let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let manager = Arc::new(
        manager(&server)
            .health_probe_bind_address(localhost)
            .webhook_server(test_config(dir.path()))
            .build(),
    );
    manager.cache().informers::<ConfigMap>().unwrap();
    let webhook = Webhook::raw(
        "/check",
        admission_fn(|request: AdmissionRequest| async move {
            if request.name == "boom" {
                panic!("boom");
            }
            AdmissionResponse::from(&request)
        }),
    );
    manager.add_webhook(webhook).unwrap();
    let running = spawn(&manager);
    eventually("the webhook listener", Duration::from_secs(10), || {
        manager.addresses().webhook.is_some()
    })
    .await;
    eventually("the probe listener", Duration::from_secs(10), || {
        manager.addresses().health_probes.is_some()
    })
    .await;
    let (webhooks, probes) = (
        manager.addresses().webhook.unwrap(),
        manager.addresses().health_probes.unwrap(),
    );

    // Serving while the caches are not synced; readiness names both.
    let client = ca.client_config();
    let body = |name: &str| {
        let mut review = review("CREATE", Some(config_map(json!({}))), None);
        review["request"]["name"] = json!(name);
        serde_json::to_vec(&review).unwrap()
    };
    let reply = request_tls(
        webhooks,
        &client,
        "POST",
        "/check",
        Some("application/json"),
        body("a"),
    )
    .await;
    assert_eq!(reply.response()["allowed"], true);
    assert!(!manager.has_synced());
    let (status, text) = get(probes, "/readyz?verbose").await;
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains("[+]webhook ok") && text.contains("[-]informers failed"),
        "{text}"
    );
    assert_eq!(get(probes, "/readyz/webhook").await.0, 200);

    // Registering after the start works too.
    manager
        .add_webhook(Webhook::raw(
            "/late",
            admission_fn(|request: AdmissionRequest| async move {
                AdmissionResponse::from(&request).deny("late")
            }),
        ))
        .unwrap();
    let reply = request_tls(
        webhooks,
        &client,
        "POST",
        "/late",
        Some("application/json"),
        body("a"),
    )
    .await;
    assert_eq!(reply.response()["status"]["message"], "late");

    // A panic, a bad body.
    request_tls(
        webhooks,
        &client,
        "POST",
        "/check",
        Some("application/json"),
        body("boom"),
    )
    .await;
    let reply = request_tls(
        webhooks,
        &client,
        "POST",
        "/check",
        Some("application/json"),
        b"{".to_vec(),
    )
    .await;
    assert_eq!(reply.status, 400);

    #[cfg(feature = "metrics")]
    {
        let text = manager.metrics().render();
        for expected in [
            r#"controller_runtime_webhook_requests_total{webhook="/check",code="200"} 2"#,
            r#"controller_runtime_webhook_requests_total{webhook="/check",code="400"} 1"#,
            r#"controller_runtime_webhook_requests_total{webhook="/check",code="500"} 0"#,
            r#"controller_runtime_webhook_requests_total{webhook="/late",code="200"} 1"#,
            r#"controller_runtime_webhook_latency_seconds_count{webhook="/check"} 3"#,
            r#"controller_runtime_webhook_requests_in_flight{webhook="/check"} 0"#,
            "controller_runtime_webhook_panics_total 1",
            "# TYPE controller_runtime_webhook_latency_seconds histogram",
        ] {
            assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
        }
    }

    server.clear_faults();
    eventually("the caches sync", Duration::from_secs(10), || {
        manager.has_synced()
    })
    .await;
    assert_eq!(get(probes, "/readyz").await.0, 200);
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    eventually(
        "the webhook server stops with the manager",
        Duration::from_secs(5),
        || !manager.webhook_server().unwrap().is_serving(),
    )
    .await;
}

#[tokio::test]
async fn webhooks_need_a_configured_server_and_readiness_waits_for_the_start() {
    let server = TestCluster::start().await.unwrap();
    let manager = manager(&server).build();
    assert!(manager.webhook_server().is_none());
    let webhook = Webhook::raw(
        "/x",
        admission_fn(|request: AdmissionRequest| async move { AdmissionResponse::from(&request) }),
    );
    assert!(matches!(
        manager.add_webhook(webhook),
        Err(Error::Webhook(_))
    ));

    let standalone = WebhookServer::new(Default::default());
    let ready = standalone.started_checker();
    assert_eq!(
        ready(),
        Err("webhook server has not been started yet".to_owned())
    );
}
