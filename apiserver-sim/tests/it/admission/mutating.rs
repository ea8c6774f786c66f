//! Mutating webhooks: defaulting through a JSON patch, re-validation of the result, the order
//! of configurations, mutating before validating, and `reinvocationPolicy: IfNeeded`.

use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer, admit, configuration, deny, patch, rules, webhook};
use super::{cm, configure, send};
use crate::common;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// Kubernetes docs, "Response": a mutating webhook's `JSONPatch` is applied to the object,
/// which is stored and returned as patched.
#[tokio::test]
async fn patch_defaults_the_object() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(patch(r, json!([{"op": "add", "path": "/data/defaulted", "value": "yes"},
                                   {"op": "add", "path": "/metadata/labels/team", "value": "core"}])))
    })
    .await;
    let mut w = webhook(
        "default.example.com",
        hook.client_config("/mutate"),
        rules("configmaps"),
    );
    w["reinvocationPolicy"] = json!("Never");
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "defaults", vec![w]),
    );
    let r = send(&server, "POST", CMS, &cm("a", json!({"app": "x"}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["data"]["defaulted"], "yes");
    let stored = &server.objects("", "configmaps")[0];
    assert_eq!(
        stored["metadata"]["labels"],
        json!({"app": "x", "team": "core"})
    );
    // Mutating webhooks see the object before the server fills its fields.
    let reviews = hook.reviews("/mutate");
    assert!(reviews[0]["object"]["metadata"].get("uid").is_none());
}

/// Kubernetes docs, "Admission control phases": the mutated object is validated again; an
/// invalid patch result is refused with 422 and nothing is stored.
#[tokio::test]
async fn patched_object_is_validated() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(patch(
            r,
            json!([{"op": "add", "path": "/metadata/labels/bad key!", "value": "x"}]),
        ))
    })
    .await;
    let w = webhook(
        "bad.example.com",
        hook.client_config("/mutate"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "bad", vec![w]),
    );
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["reason"], "Invalid");
    assert!(server.objects("", "configmaps").is_empty());
}

/// Kubernetes docs, "Admission control phases": mutating webhooks run first, in order of
/// configuration name; validating webhooks judge the mutated object.
#[tokio::test]
async fn mutating_in_name_order_then_validating() {
    let server = common::server().await;
    let hook = WebhookServer::start(|path, r| {
        let obj = &r["request"]["object"];
        Reply::ok(match path.split('?').next().unwrap_or("") {
            "/validate" if obj["metadata"]["annotations"]["order"] != "a,z" => {
                deny(r, json!({"message": format!("order {}", obj["metadata"]["annotations"]["order"])}))
            }
            "/validate" => admit(r, json!({})),
            p => {
                let me = if p == "/a" { "a" } else { "z" };
                let order = obj["metadata"]["annotations"]["order"].as_str().map(|o| format!("{o},{me}"));
                let value = order.unwrap_or_else(|| me.to_string());
                patch(r, json!([{"op": "add", "path": "/metadata/annotations", "value": {"order": value}}]))
            }
        })
    })
    .await;
    for name in ["z", "a"] {
        let w = webhook(
            &format!("{name}.example.com"),
            hook.client_config(&format!("/{name}")),
            rules("configmaps"),
        );
        configure(
            &server,
            configuration(
                "MutatingWebhookConfiguration",
                &format!("{name}-config"),
                vec![w],
            ),
        );
    }
    let v = webhook(
        "check.example.com",
        hook.client_config("/validate"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "check", vec![v]),
    );
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["metadata"]["annotations"]["order"], "a,z");
}

/// Kubernetes docs, "Reinvocation policy": a webhook with `IfNeeded` is called once more when
/// a later webhook changed the object; one with `Never` is not; a webhook never runs a third
/// time.
#[tokio::test]
async fn if_needed_webhooks_are_reinvoked_once() {
    let server = common::server().await;
    let hook = WebhookServer::start(|path, r| {
        let labels = &r["request"]["object"]["metadata"]["labels"];
        let ops = match path.split('?').next().unwrap_or("") {
            // Copies label b into c, if there is a b.
            "/first" | "/never" => match labels.get("b") {
                Some(b) => json!([{"op": "add", "path": "/metadata/labels/c", "value": b}]),
                None => json!([]),
            },
            // Always sets b (a change only the first time).
            _ => json!([{"op": "add", "path": "/metadata/labels/b", "value": "set"}]),
        };
        Reply::ok(patch(r, ops))
    })
    .await;
    let mut first = webhook(
        "first.example.com",
        hook.client_config("/first"),
        rules("configmaps"),
    );
    first["reinvocationPolicy"] = json!("IfNeeded");
    let never = webhook(
        "never.example.com",
        hook.client_config("/never"),
        rules("configmaps"),
    );
    let second = webhook(
        "second.example.com",
        hook.client_config("/second"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "a", vec![first, never]),
    );
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "b", vec![second]),
    );
    let r = send(&server, "POST", CMS, &cm("x", json!({}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.json()["metadata"]["labels"],
        json!({"b": "set", "c": "set"})
    );
    let calls = |p: &str| hook.reviews(p).len();
    assert_eq!(
        (calls("/first"), calls("/never"), calls("/second")),
        (2, 1, 1)
    );
}

/// apiserver mutating dispatcher: a patch on DELETE (no object) is refused as an internal
/// error; an empty patch is no change.
#[tokio::test]
async fn patch_on_delete_is_refused() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(if r["request"]["operation"] == "DELETE" {
            patch(r, json!([{"op": "add", "path": "/x", "value": 1}]))
        } else {
            patch(r, json!([]))
        })
    })
    .await;
    let w = webhook(
        "m.example.com",
        hook.client_config("/m"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "m", vec![w]),
    );
    assert_eq!(
        send(&server, "POST", CMS, &cm("a", json!({}))).await.status,
        201
    );
    let r = send(&server, "DELETE", &format!("{CMS}/a"), &Value::Null).await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "Internal error occurred: admission webhook \"m.example.com\" attempted to modify the object, which is not supported for this operation"
    );
}

/// Server-side apply through a mutating webhook: the applied object is what the webhook
/// sees (CREATE when new, UPDATE after), the webhook's patch is kept, and the apply's field
/// ownership is stored (Kubernetes docs, Server-Side Apply; Dynamic Admission Control).
#[tokio::test]
async fn server_side_apply_goes_through_admission() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(patch(
            r,
            json!([{"op": "add", "path": "/metadata/annotations", "value": {"seen": "yes"}}]),
        ))
    })
    .await;
    let w = webhook(
        "ssa.example.com",
        hook.client_config("/m"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("MutatingWebhookConfiguration", "ssa", vec![w]),
    );
    let path = format!("{CMS}/applied?fieldManager=tester");
    let body = serde_json::to_vec(&cm("applied", json!({"app": "x"}))).expect("json");
    let ct = [("Content-Type", "application/apply-patch+yaml")];
    for (round, op) in [(0, "CREATE"), (1, "UPDATE")] {
        let r = common::raw(&server, "PATCH", &path, &ct, &body).await;
        assert!(r.status == 201 || r.status == 200, "{}", r.body);
        assert_eq!(r.json()["metadata"]["annotations"]["seen"], "yes");
        let reviews = hook.reviews("/m");
        assert_eq!(reviews[round]["operation"], op);
        assert_eq!(reviews[round]["object"]["data"]["k"], "v");
    }
    let stored = &server.objects("", "configmaps")[0];
    let managers: Vec<(&str, &str)> = stored["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| Some((m["manager"].as_str()?, m["operation"].as_str()?)))
        .collect();
    assert!(managers.contains(&("tester", "Apply")), "{managers:?}");
}
