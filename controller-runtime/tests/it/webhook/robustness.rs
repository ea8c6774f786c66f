//! Handlers that panic or overrun, and bodies that are not reviews: each review is answered,
//! and the server keeps serving.

use std::time::Duration;

use controller_runtime::webhook::{
    AdmissionRequest, AdmissionResponse, Webhook, WebhookServer, admission_fn,
};
use serde_json::json;

use super::support::{TestCa, TestServer, config_map, review, test_config};

async fn server() -> TestServer {
    server_with(Duration::from_secs(10)).await
}

/// A server whose handlers may take `timeout`.
async fn server_with(timeout: Duration) -> TestServer {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    ca.issue(dir.path(), "webhook-1");
    let server = WebhookServer::new(
        test_config(dir.path())
            .handler_timeout(timeout)
            .max_body_bytes(4096),
    );
    let register = |path: &str, behaviour: &'static str| {
        server
            .register(Webhook::raw(
                path,
                admission_fn(move |request: AdmissionRequest| async move {
                    match behaviour {
                        "panic" => panic!("handler exploded on {}", request.name),
                        "slow" => tokio::time::sleep(Duration::from_secs(30)).await,
                        _ => {}
                    }
                    AdmissionResponse::from(&request)
                }),
            ))
            .unwrap();
    };
    register("/panics", "panic");
    register("/slow", "slow");
    register("/allow", "allow");
    TestServer::start_with(ca, dir, server).await
}

fn body() -> serde_json::Value {
    review("CREATE", Some(config_map(json!({"a": "1"}))), None)
}

#[tokio::test]
async fn a_panicking_or_slow_handler_gets_an_error_response_and_the_server_keeps_serving() {
    let server = server().await;
    let reply = server.post("/panics", &body()).await;
    assert_eq!(reply.status, 200);
    let response = reply.response();
    assert_eq!(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 500);
    assert_eq!(
        response["status"]["message"],
        "panic: handler exploded on settings [recovered]"
    );

    // A server of its own with a short timeout: printing a panic's backtrace may take longer.
    let impatient = server_with(Duration::from_millis(200)).await;
    let started = tokio::time::Instant::now();
    let response = impatient.post("/slow", &body()).await.response();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 500);
    assert_eq!(
        response["status"]["message"],
        "the webhook handler did not answer within 200ms"
    );

    assert_eq!(
        server.post("/allow", &body()).await.response()["allowed"],
        true
    );
    assert_eq!(
        impatient.post("/allow", &body()).await.response()["allowed"],
        true
    );
    assert!(server.server.is_serving() && impatient.server.is_serving());
}

#[tokio::test]
async fn malformed_or_oversized_bodies_get_400_with_a_clear_message() {
    let server = server().await;
    let cases: Vec<(Option<&str>, Vec<u8>, &str)> = vec![
        (
            Some("application/json"),
            b"{not json".to_vec(),
            "cannot decode the AdmissionReview",
        ),
        (
            Some("application/json"),
            Vec::new(),
            "request body is empty",
        ),
        (
            Some("application/json"),
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
            "has no `request`",
        ),
        (
            Some("application/json"),
            br#"{"apiVersion":"admission.k8s.io/v1beta1","request":{}}"#.to_vec(),
            "unsupported AdmissionReview version",
        ),
        (
            Some("application/json"),
            br#"{"request":{"uid":"x"}}"#.to_vec(),
            "cannot decode the AdmissionReview's request",
        ),
        (
            Some("text/plain"),
            serde_json::to_vec(&body()).unwrap(),
            "contentType=text/plain, expected application/json",
        ),
        (
            Some("application/json"),
            vec![b' '; 5000],
            "request entity is too large; limit is 4096 bytes",
        ),
    ];
    for (content_type, bytes, message) in cases {
        let reply = server.post_raw("/allow", content_type, bytes).await;
        assert_eq!(reply.status, 400, "{message}");
        let response = reply.response();
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 400);
        let text = response["status"]["message"].as_str().unwrap();
        assert!(
            text.contains(message),
            "{text:?} should contain {message:?}"
        );
    }
    assert_eq!(
        server.post("/allow", &body()).await.response()["allowed"],
        true,
        "still serving"
    );
}

#[tokio::test]
async fn only_post_is_served_and_unknown_paths_are_404() {
    let server = server().await;
    let get = super::support::request_tls(
        server.addr,
        &server.ca.client_config(),
        "GET",
        "/allow",
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(get.status, 405);
    let unknown = server.post("/validate-nothing", &body()).await;
    assert_eq!(unknown.status, 404);
}
