//! Validating webhooks: what they receive, allow, deny (code and message), warnings, and the
//! final object after mutation and defaulting.

use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer, admit, configuration, deny, rules, webhook};
use super::{cm, configure, send, warnings};
use crate::common;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn validating(
    handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static,
) -> (apiserver_sim::ApiServer, WebhookServer) {
    let server = common::server().await;
    let hook = WebhookServer::start(handler).await;
    configure(
        &server,
        configuration(
            "ValidatingWebhookConfiguration",
            "check",
            vec![webhook(
                "check.example.com",
                hook.client_config("/validate"),
                rules("configmaps"),
            )],
        ),
    );
    (server, hook)
}

/// Kubernetes docs, Dynamic Admission Control, "Request": the AdmissionReview v1 a webhook
/// receives on create, with the deadline as `?timeout=10s` (the default `timeoutSeconds`).
#[tokio::test]
async fn allowed_create_sends_the_admission_review() {
    let (server, hook) = validating(|_, r| Reply::ok(admit(r, json!({})))).await;
    let r = send(&server, "POST", CMS, &cm("a", json!({"app": "x"}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let reqs = hook.requests.lock().clone();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].0, "/validate?timeout=10s");
    let review = &reqs[0].1;
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    let req = &review["request"];
    assert_eq!(
        req["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        req["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(req["requestKind"], req["kind"]);
    assert_eq!(req["operation"], "CREATE");
    assert_eq!(
        (req["name"].as_str(), req["namespace"].as_str()),
        (Some("a"), Some("default"))
    );
    assert_eq!(req["dryRun"], false);
    assert_eq!(req["options"]["kind"], "CreateOptions");
    assert_eq!(req["oldObject"], Value::Null);
    // Validating webhooks see the object as it will be stored.
    assert!(req["object"]["metadata"]["uid"].is_string());
    assert_eq!(req["object"]["data"]["k"], "v");
    assert_eq!(req["userInfo"]["username"], "system:admin");
    assert_eq!(server.objects("", "configmaps").len(), 1);
}

/// apiserver `webhook/errors/statuserror.go`: a denial keeps the webhook's code (raised to at
/// least 400) and reason, and its message becomes `admission webhook "<name>" denied the
/// request: <message>`; nothing is stored.
#[tokio::test]
async fn denial_returns_the_webhook_status() {
    let (server, _hook) = validating(|_, r| {
        let name = r["request"]["name"].as_str().unwrap_or("");
        Reply::ok(match name {
            "coded" => deny(
                r,
                json!({"code": 422, "reason": "Invalid", "message": "data.k must be long"}),
            ),
            "bare" => deny(r, json!({})),
            _ => deny(r, json!({"code": 200, "reason": "only a reason"})),
        })
    })
    .await;
    let r = send(&server, "POST", CMS, &cm("coded", json!({}))).await;
    assert_eq!(r.status, 422);
    let s = r.json();
    assert_eq!(
        s["message"],
        "admission webhook \"check.example.com\" denied the request: data.k must be long"
    );
    assert_eq!(
        (
            s["reason"].as_str(),
            s["code"].as_u64(),
            s["status"].as_str()
        ),
        (Some("Invalid"), Some(422), Some("Failure"))
    );
    let r = send(&server, "POST", CMS, &cm("bare", json!({}))).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "admission webhook \"check.example.com\" denied the request without explanation"
    );
    assert!(r.json().get("reason").is_none());
    let r = send(&server, "POST", CMS, &cm("other", json!({}))).await;
    assert_eq!(r.status, 400, "a code below 400 is raised to 400");
    assert_eq!(
        r.json()["message"],
        "admission webhook \"check.example.com\" denied the request: only a reason"
    );
    assert!(server.objects("", "configmaps").is_empty());
}

/// Kubernetes docs, "Response": `warnings` become `Warning: 299 - "<text>"` headers, on
/// success and on denial alike.
#[tokio::test]
async fn warnings_become_warning_headers() {
    let (server, _hook) = validating(|_, r| {
        let w = json!({"warnings": ["first \"one\"", "second"]});
        if r["request"]["name"] == "no" {
            let mut d = deny(r, json!({"message": "no"}));
            d["response"]["warnings"] = w["warnings"].clone();
            Reply::ok(d)
        } else {
            Reply::ok(admit(r, w))
        }
    })
    .await;
    let r = send(&server, "POST", CMS, &cm("yes", json!({}))).await;
    assert_eq!(r.status, 201);
    assert_eq!(
        warnings(&r),
        ["299 - \"first \\\"one\\\"\"", "299 - \"second\""]
    );
    let r = send(&server, "POST", CMS, &cm("no", json!({}))).await;
    assert_eq!(r.status, 400);
    assert_eq!(warnings(&r).len(), 2);
}

/// Kubernetes docs, "Request": UPDATE carries `object` and `oldObject` (and PATCH is an
/// UPDATE with `PatchOptions`); DELETE carries the stored object as `oldObject`, no object,
/// and `DeleteOptions`; a denied delete leaves the object.
#[tokio::test]
async fn update_patch_and_delete_carry_the_old_object() {
    let (server, hook) = validating(|_, r| {
        let deny_delete = r["request"]["operation"] == "DELETE"
            && r["request"]["oldObject"]["metadata"]["labels"]["keep"] == "yes";
        Reply::ok(if deny_delete {
            deny(r, json!({"code": 403, "message": "kept"}))
        } else {
            admit(r, json!({}))
        })
    })
    .await;
    assert_eq!(
        send(&server, "POST", CMS, &cm("a", json!({"keep": "yes"})))
            .await
            .status,
        201
    );
    let mut body = cm("a", json!({"keep": "yes"}));
    body["data"]["k"] = json!("w");
    assert_eq!(
        send(&server, "PUT", &format!("{CMS}/a"), &body)
            .await
            .status,
        200
    );
    let r = send(
        &server,
        "PATCH",
        &format!("{CMS}/a"),
        &json!({"data": {"k": "z"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = send(&server, "DELETE", &format!("{CMS}/a"), &Value::Null).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "admission webhook \"check.example.com\" denied the request: kept"
    );
    assert_eq!(server.objects("", "configmaps").len(), 1);
    let reviews = hook.reviews("/validate");
    let ops: Vec<&str> = reviews
        .iter()
        .filter_map(|r| r["operation"].as_str())
        .collect();
    assert_eq!(ops, ["CREATE", "UPDATE", "UPDATE", "DELETE"]);
    assert_eq!(reviews[1]["oldObject"]["data"]["k"], "v");
    assert_eq!(reviews[1]["object"]["data"]["k"], "w");
    assert_eq!(reviews[1]["options"]["kind"], "UpdateOptions");
    assert_eq!(reviews[2]["object"]["data"]["k"], "z");
    // A patch reaches admission as the update it becomes, as upstream sends it.
    assert_eq!(reviews[2]["options"]["kind"], "UpdateOptions");
    assert_eq!(reviews[3]["object"], Value::Null);
    assert_eq!(reviews[3]["oldObject"]["data"]["k"], "z");
    assert_eq!(reviews[3]["options"]["kind"], "DeleteOptions");
}

/// Kubernetes docs, "Side effects" and dry run: a dry-run request calls webhooks whose
/// `sideEffects` is None or NoneOnDryRun with `dryRun: true`, and stores nothing.
#[tokio::test]
async fn dry_run_calls_side_effect_free_webhooks() {
    let (server, hook) = validating(|_, r| Reply::ok(admit(r, json!({})))).await;
    let r = send(
        &server,
        "POST",
        &format!("{CMS}?dryRun=All"),
        &cm("dry", json!({})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let reviews = hook.reviews("/validate");
    assert_eq!(reviews[0]["dryRun"], true);
    assert_eq!(reviews[0]["options"]["dryRun"], json!(["All"]));
    assert!(server.objects("", "configmaps").is_empty());
}

/// apiserver generic registry, DeleteCollection: each object is validated as a DELETE before
/// it is deleted; a denial fails the request, and objects deleted before it stay deleted.
#[tokio::test]
async fn delete_collection_admits_each_object() {
    let (server, hook) = validating(|_, r| {
        let keep = r["request"]["oldObject"]["metadata"]["labels"]["keep"] == "yes";
        Reply::ok(if keep {
            deny(r, json!({"code": 403, "message": "kept"}))
        } else {
            admit(r, json!({}))
        })
    })
    .await;
    server.create_json(cm("a", json!({}))).expect("a");
    server
        .create_json(cm("b", json!({"keep": "yes"})))
        .expect("b");
    let r = send(&server, "DELETE", CMS, &Value::Null).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let left: Vec<String> = server
        .objects("", "configmaps")
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(left, ["b"]);
    let reviews = hook.reviews("/validate");
    let deleted: Vec<&str> = reviews.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(deleted, ["a", "b"]);
}
