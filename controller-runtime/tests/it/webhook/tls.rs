//! HTTPS with the certificate from the directory, its rotation without a restart, start-up
//! errors, and plain HTTP when asked for.

use std::time::Duration;

use controller_runtime::webhook::{Error as WebhookError, WebhookServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{TestCa, TestServer, config_map, request_plain, review, test_config};
use crate::common::eventually;

async fn served_certificate(server: &TestServer) -> Vec<u8> {
    let reply = server.post("/nothing-here", &json!({})).await;
    assert_eq!(reply.status, 404);
    reply
        .peer
        .expect("the server presents a certificate")
        .to_vec()
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let first = ca.issue(dir.path(), "webhook-1");
    let server =
        WebhookServer::new(test_config(dir.path()).cert_reload_interval(Duration::from_millis(50)));
    let server = TestServer::start_with(ca, dir, server).await;
    assert_eq!(served_certificate(&server).await, first.to_vec());

    let second = server.ca.issue(server.dir.path(), "webhook-2");
    assert_ne!(first, second);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while served_certificate(&server).await != second.to_vec() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A half-written rotation does not load: the last good certificate stays.
    std::fs::write(
        server.dir.path().join("tls.crt"),
        "-----BEGIN CERTIFICATE-----\ngarbage",
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(served_certificate(&server).await, second.to_vec());
    assert!(server.server.is_serving());
}

#[tokio::test]
async fn start_fails_clearly_without_a_usable_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let server = WebhookServer::new(test_config(dir.path()));
    let error = server.start(CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&error, WebhookError::Certificate { path, .. } if path.ends_with("tls.crt")),
        "{error}"
    );
    assert!(error.to_string().contains("cannot read it"), "{error}");
    assert!(!server.is_serving());

    // A key that is not the certificate's.
    let ca = TestCa::new();
    ca.issue(dir.path(), "webhook-1");
    let other = tempfile::tempdir().unwrap();
    ca.issue(other.path(), "webhook-2");
    std::fs::copy(other.path().join("tls.key"), dir.path().join("tls.key")).unwrap();
    let error = server.start(CancellationToken::new()).await.unwrap_err();
    assert!(
        error.to_string().contains("does not match the certificate"),
        "{error}"
    );

    // Once the files are right, the same server starts.
    ca.issue(dir.path(), "webhook-3");
    let stop = CancellationToken::new();
    server.start(stop.clone()).await.unwrap();
    assert!(server.is_serving());
    assert!(matches!(
        server.start(stop.clone()).await,
        Err(WebhookError::AlreadyStarted)
    ));
    stop.cancel();
    eventually("the server stops", Duration::from_secs(5), || {
        !server.is_serving()
    })
    .await;
}

#[tokio::test]
async fn plain_http_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let server = WebhookServer::new(test_config(dir.path()).plain_http());
    server
        .register(controller_runtime::webhook::Webhook::raw(
            "/allow",
            controller_runtime::webhook::admission_fn(|request| async move {
                controller_runtime::webhook::AdmissionResponse::from(&request)
            }),
        ))
        .unwrap();
    let stop = CancellationToken::new();
    // No certificate is needed (the directory is empty).
    let addr = server.start(stop.clone()).await.unwrap();
    let body = serde_json::to_vec(&review("CREATE", Some(config_map(json!({}))), None)).unwrap();
    let reply = request_plain(addr, "/allow", body).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.response()["allowed"], true);
    stop.cancel();
}
