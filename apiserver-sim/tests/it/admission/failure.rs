//! Webhooks that cannot be called: `failurePolicy` Fail and Ignore with the webhook down,
//! timing out, failing TLS verification or answering nonsense; services resolved through the
//! simulator's endpoint table; validation of the configurations themselves.

use std::time::Duration;

use apiserver_sim::ApiServer;
use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer, admit, configuration, deny, rules, webhook};
use super::{cm, configure, send};
use crate::common;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    l.local_addr().expect("addr").port()
}

fn validating_with(server: &ApiServer, client_config: Value, policy: &str, timeout: Option<u64>) {
    let mut w = webhook("fragile.example.com", client_config, rules("configmaps"));
    w["failurePolicy"] = json!(policy);
    if let Some(t) = timeout {
        w["timeoutSeconds"] = json!(t);
    }
    configure(
        server,
        configuration("ValidatingWebhookConfiguration", "fragile", vec![w]),
    );
}

/// apiserver validating dispatcher: with `failurePolicy: Fail` an unreachable webhook fails
/// the request with 500 `failed calling webhook`; with `Ignore` the request goes through.
#[tokio::test]
async fn webhook_down_fails_or_is_ignored() {
    let server = common::server().await;
    let port = closed_port().await;
    let url = format!("https://127.0.0.1:{port}/validate");
    validating_with(&server, json!({"url": url}), "Fail", None);
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500);
    let s = r.json();
    assert_eq!(s["reason"], "InternalError");
    assert_eq!(
        s["message"],
        format!(
            "Internal error occurred: failed calling webhook \"fragile.example.com\": failed to call webhook: Post \"{url}?timeout=10s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    assert!(server.objects("", "configmaps").is_empty());
    let ignoring = common::server().await;
    validating_with(&ignoring, json!({"url": url}), "Ignore", None);
    assert_eq!(
        send(&ignoring, "POST", CMS, &cm("a", json!({})))
            .await
            .status,
        201
    );
}

/// Kubernetes docs, "Timeouts": a webhook slower than `timeoutSeconds` counts as a failed
/// call: Fail refuses the request (`context deadline exceeded`), Ignore admits it. (Tokio's
/// paused clock: the webhook's 60 s never pass for real.)
#[tokio::test(start_paused = true)]
async fn timeout_fails_or_is_ignored() {
    let hook = WebhookServer::start(|_, r| Reply {
        delay: Some(Duration::from_secs(60)),
        ..Reply::ok(deny(r, json!({"message": "too late to matter"})))
    })
    .await;
    let server = common::server().await;
    validating_with(&server, hook.client_config("/slow"), "Fail", Some(1));
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500, "{}", r.body);
    let message = r.json()["message"].as_str().unwrap_or("").to_string();
    assert!(
        message.ends_with("/slow?timeout=1s\": context deadline exceeded"),
        "{message}"
    );
    let ignoring = common::server().await;
    validating_with(&ignoring, hook.client_config("/slow"), "Ignore", Some(1));
    assert_eq!(
        send(&ignoring, "POST", CMS, &cm("a", json!({})))
            .await
            .status,
        201
    );
}

/// Kubernetes docs, "Contacting the webhook": the server certificate is verified against
/// `caBundle`; a certificate from another authority is a failed call.
#[tokio::test]
async fn certificate_is_verified_against_ca_bundle() {
    let hook = WebhookServer::start(|_, r| Reply::ok(admit(r, json!({})))).await;
    let server = common::server().await;
    let cc = json!({"url": format!("{}/v", hook.url), "caBundle": hook.wrong_ca_bundle});
    validating_with(&server, cc, "Fail", None);
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500);
    let message = r.json()["message"].as_str().unwrap_or("").to_string();
    assert!(
        // Both authorities are rcgen's, with the same subject: Go names the candidate it
        // tried and why it failed, after the reason.
        message.contains("tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of \"x509: ECDSA verification failure\""),
        "{message}"
    );
    assert!(hook.requests.lock().is_empty());
}

/// Kubernetes docs, "Service reference": `clientConfig.service` is called at
/// `https://<name>.<namespace>.svc:<port><path>`; the simulator maps the service to a local
/// address, and an unmapped service fails like a missing one.
#[tokio::test]
async fn service_references_resolve_through_the_endpoint_table() {
    let hook = WebhookServer::start(|_, r| Reply::ok(admit(r, json!({})))).await;
    let server = ApiServer::builder()
        .service_endpoint("webhooks", "hook", None, &hook.url)
        .start()
        .await
        .expect("server");
    let svc = json!({"service": {"namespace": "webhooks", "name": "hook", "path": "/by-service"},
                     "caBundle": hook.ca_bundle});
    validating_with(&server, svc, "Fail", None);
    assert_eq!(
        send(&server, "POST", CMS, &cm("a", json!({}))).await.status,
        201
    );
    assert_eq!(hook.reviews("/by-service").len(), 1);
    let unmapped = common::server().await;
    let svc = json!({"service": {"namespace": "webhooks", "name": "gone", "path": "/x"}});
    validating_with(&unmapped, svc, "Fail", None);
    let r = send(&unmapped, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "Internal error occurred: failed calling webhook \"fragile.example.com\": failed to call webhook: Post \"https://gone.webhooks.svc:443/x\": service \"gone\" not found"
    );
}

/// apiserver `VerifyAdmissionResponse`: an answer whose uid is not the request's is an
/// invalid response, handled by `failurePolicy`.
#[tokio::test]
async fn invalid_answer_is_a_failed_call() {
    let hook = WebhookServer::start(|_, _| {
        Reply::ok(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                         "response": {"uid": "not-yours", "allowed": true}}),
        )
    })
    .await;
    let server = common::server().await;
    validating_with(&server, hook.client_config("/v"), "Fail", None);
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500);
    let message = r.json()["message"].as_str().unwrap_or("").to_string();
    assert!(
        message.contains("received invalid webhook response: expected response.uid="),
        "{message}"
    );
    let ignoring = common::server().await;
    validating_with(&ignoring, hook.client_config("/v"), "Ignore", None);
    assert_eq!(
        send(&ignoring, "POST", CMS, &cm("a", json!({})))
            .await
            .status,
        201
    );
}

/// Kubernetes API reference, admissionregistration/v1: v1 defaults are filled in, and
/// `sideEffects` other than None/NoneOnDryRun, plain-http URLs and timeouts over 30 s are
/// refused with 422.
#[tokio::test]
async fn configurations_are_defaulted_and_validated() {
    let server = common::server().await;
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let w = webhook(
        "ok.example.com",
        json!({"url": "https://127.0.0.1:1/x"}),
        rules("pods"),
    );
    let r = send(
        &server,
        "POST",
        path,
        &configuration("ValidatingWebhookConfiguration", "ok", vec![w]),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let w = &r.json()["webhooks"][0];
    assert_eq!(
        (
            w["failurePolicy"].as_str(),
            w["matchPolicy"].as_str(),
            w["timeoutSeconds"].as_u64()
        ),
        (Some("Fail"), Some("Equivalent"), Some(10))
    );
    assert_eq!(
        (
            w["namespaceSelector"].clone(),
            w["rules"][0]["scope"].clone()
        ),
        (json!({}), json!("*"))
    );
    let mut bad = webhook(
        "bad.example.com",
        json!({"url": "http://127.0.0.1:1/x"}),
        rules("pods"),
    );
    bad["sideEffects"] = json!("Some");
    bad["timeoutSeconds"] = json!(31);
    let r = send(
        &server,
        "POST",
        path,
        &configuration("ValidatingWebhookConfiguration", "bad", vec![bad]),
    )
    .await;
    assert_eq!(r.status, 422);
    let fields: Vec<String> = r.json()["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["field"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        fields,
        [
            "webhooks[0].sideEffects",
            "webhooks[0].timeoutSeconds",
            "webhooks[0].clientConfig.url"
        ]
    );
}

/// apiserver `IsExemptAdmissionConfigurationResource`: requests on webhook configurations
/// never go to webhooks, so a webhook that refuses everything can still be removed.
#[tokio::test]
async fn webhook_configurations_are_exempt() {
    let hook = WebhookServer::start(|_, r| Reply::ok(deny(r, json!({"message": "no"})))).await;
    let server = common::server().await;
    let all = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]);
    let w = webhook("wall.example.com", hook.client_config("/wall"), all);
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "wall", vec![w]),
    );
    assert_eq!(
        send(&server, "POST", CMS, &cm("a", json!({}))).await.status,
        400
    );
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wall";
    let r = send(&server, "DELETE", path, &Value::Null).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        send(&server, "POST", CMS, &cm("a", json!({}))).await.status,
        201
    );
}
