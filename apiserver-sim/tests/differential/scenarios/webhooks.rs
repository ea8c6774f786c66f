//! Admission webhooks called by the server: a validating webhook's denial and warnings, a
//! mutating webhook's patch, the `AdmissionReview` requests received for create, update,
//! delete and dry runs, `failurePolicy` with a webhook that is down, and a serving certificate
//! refused for the name called. The webhook serves the common OpenSSL-made self-signed
//! certificate (`CA:TRUE`, its own `caBundle`), on loopback. (The requesting user is left
//! out: the admin's name is the cluster's own.)

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::harness::{Reply, WebhookServer};

const CERT: &[u8] = include_bytes!("../../it/admission/certs/self-signed.crt");
const KEY: &[u8] = include_bytes!("../../it/admission/certs/self-signed.key");

/// The answer of the webhook at `path` to `review`.
fn answer(path: &str, review: &Value) -> Value {
    let path = path.split('?').next().unwrap_or_default();
    let uid = review["request"]["uid"].clone();
    let response = match path {
        "/deny" => json!({"uid": uid, "allowed": false,
            "status": {"code": 403, "reason": "Forbidden", "message": "no thanks"}}),
        "/warn" => json!({"uid": uid, "allowed": true, "warnings": ["looked at it", "twice"]}),
        "/mutate" => json!({"uid": uid, "allowed": true, "patchType": "JSONPatch",
            "patch": STANDARD.encode(r#"[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]"#)}),
        _ => json!({"uid": uid, "allowed": true}),
    };
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// What a review tells about the request (the parts a webhook author reads).
fn review_summary(r: &Value) -> Value {
    let q = &r["request"];
    json!({"apiVersion": r["apiVersion"], "kind": r["kind"], "requestKind": q["kind"], "resource": q["resource"],
        "requestResource": q["requestResource"], "subResource": q["subResource"], "name": q["name"],
        "namespace": q["namespace"], "operation": q["operation"],
        "object": q["object"]["metadata"]["name"], "objectLabels": q["object"]["metadata"]["labels"],
        "oldObject": q["oldObject"]["metadata"]["name"], "dryRun": q["dryRun"], "options": q["options"]["kind"]})
}

fn hook(name: &str, url: String, selector: &str, policy: &str, ops: &[&str], ns: &str) -> Value {
    json!({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": policy,
        "timeoutSeconds": 5, "clientConfig": {"url": url, "caBundle": STANDARD.encode(CERT)},
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        "objectSelector": {"matchLabels": {"hook": selector}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["configmaps"]}]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let webhook = WebhookServer::start_with_pem(CERT, KEY, CERT, |path, review| {
        Reply::ok(answer(path, review))
    })
    .await;
    let port = webhook
        .url
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let seen = webhook.requests.clone();
    let at = |path: &str| format!("https://127.0.0.1:{port}{path}");
    let all = ["CREATE", "UPDATE", "DELETE"];
    let validating = ctx.unique("diff-validating");
    let mutating = ctx.unique("diff-mutating");
    ctx.setup("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", json!({
        "metadata": {"name": validating}, "webhooks": [
            hook("deny.example.com", at("/deny"), "deny", "Fail", &all, &ns),
            hook("warn.example.com", at("/warn"), "warn", "Fail", &all, &ns),
            hook("down-ignore.example.com", "https://127.0.0.1:1/down".into(), "down-ignore", "Ignore", &all, &ns),
            hook("down-fail.example.com", "https://127.0.0.1:1/down".into(), "down-fail", "Fail", &all, &ns),
            hook("badname.example.com", format!("https://localhost:{port}/allow"), "badname", "Fail", &all, &ns)]})).await;
    ctx.setup("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", json!({
        "metadata": {"name": mutating}, "webhooks": [hook("mutate.example.com", at("/mutate"), "mutate", "Fail", &["CREATE"], &ns)]})).await;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    // A real server picks configurations up from its informer: wait (5 s at most) until the
    // validating webhook is called.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while seen.lock().is_empty() && tokio::time::Instant::now() < deadline {
        ctx.setup(
            "POST",
            &format!("{cms}?dryRun=All"),
            json!({"metadata": {"name": "canary", "labels": {"hook": "warn"}}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    seen.lock().clear();
    let cm = |name: &str, hook: &str| json!({"metadata": {"name": name, "labels": {"hook": hook}}, "data": {"k": "v"}});
    ctx.req("denied", "POST", &cms, cm("d", "deny")).await;
    ctx.req("warned", "POST", &cms, cm("w", "warn")).await;
    ctx.req("mutated", "POST", &cms, cm("m", "mutate")).await;
    ctx.req_ct(
        "updated-warned",
        "PATCH",
        &format!("{cms}/w"),
        crate::ctx::MERGE,
        r#"{"data":{"k":"2"}}"#,
    )
    .await;
    ctx.req(
        "dry-run-warned",
        "POST",
        &format!("{cms}?dryRun=All"),
        cm("dry", "warn"),
    )
    .await;
    ctx.req("deleted-warned", "DELETE", &format!("{cms}/w"), Value::Null)
        .await;
    ctx.req("down-ignored", "POST", &cms, cm("i", "down-ignore"))
        .await;
    ctx.req("down-failed", "POST", &cms, cm("f", "down-fail"))
        .await;
    ctx.req("bad-certificate-name", "POST", &cms, cm("b", "badname"))
        .await;
    let reviews: Vec<(String, Value)> = seen.lock().clone();
    for (i, (path, review)) in reviews.iter().enumerate().take(8) {
        ctx.note(
            &format!("review-{i}"),
            json!({"path": path.split('?').next(), "review": review_summary(review)}),
        );
    }
    ctx.note("reviews-received", json!(reviews.len()));
    ctx.setup(
        "DELETE",
        &format!(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{validating}"
        ),
        Value::Null,
    )
    .await;
    ctx.setup(
        "DELETE",
        &format!("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{mutating}"),
        Value::Null,
    )
    .await;
}
