//! Which requests call which webhooks (apiserver `webhook/predicates/rules` and `generic`):
//! operations, resources with subresources and wildcards, scope, `namespaceSelector`,
//! `objectSelector` (object or old object), `matchPolicy` Equivalent and Exact.

use apiserver_sim::ApiServer;
use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer, admit, configuration, deny, webhook};
use super::{cm, configure, send};
use crate::common;

/// A webhook that admits everything, recording what it saw.
async fn recorder() -> WebhookServer {
    WebhookServer::start(|_, r| Reply::ok(admit(r, json!({})))).await
}

fn rule(ops: &[&str], groups: &[&str], resources: &[&str], scope: &str) -> Value {
    json!([{"operations": ops, "apiGroups": groups, "apiVersions": ["*"], "resources": resources, "scope": scope}])
}

fn ops(hook: &WebhookServer, path: &str) -> Vec<String> {
    hook.reviews(path)
        .iter()
        .map(|r| {
            format!(
                "{}{}",
                r["operation"].as_str().unwrap_or(""),
                r["subResource"]
                    .as_str()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

/// Rules: operations, `pods` (the object only), `pods/status`, `*` (every object, no
/// subresource) and `*/*` (everything).
#[tokio::test]
async fn rules_match_operations_resources_and_subresources() {
    let server = common::server().await;
    let hook = recorder().await;
    let hooks = vec![
        webhook(
            "main.example.com",
            hook.client_config("/main"),
            rule(&["CREATE"], &[""], &["pods"], "*"),
        ),
        webhook(
            "status.example.com",
            hook.client_config("/status"),
            rule(&["*"], &[""], &["pods/status"], "*"),
        ),
        webhook(
            "star.example.com",
            hook.client_config("/star"),
            rule(&["UPDATE"], &[""], &["*"], "*"),
        ),
        webhook(
            "all.example.com",
            hook.client_config("/all"),
            rule(&["UPDATE"], &["*"], &["*/*"], "*"),
        ),
    ];
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "rules", hooks),
    );
    let pods = "/api/v1/namespaces/default/pods";
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    assert_eq!(send(&server, "POST", pods, &pod).await.status, 201);
    let r = send(
        &server,
        "PATCH",
        &format!("{pods}/p"),
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = send(
        &server,
        "PATCH",
        &format!("{pods}/p/status"),
        &json!({"status": {"phase": "Running"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(ops(&hook, "/main"), ["CREATE"]);
    assert_eq!(ops(&hook, "/status"), ["UPDATE/status"]);
    assert_eq!(ops(&hook, "/star"), ["UPDATE"]);
    assert_eq!(ops(&hook, "/all"), ["UPDATE", "UPDATE/status"]);
}

/// Rules' `scope`: Namespaced matches namespaced objects only (not namespaces themselves),
/// Cluster matches cluster-scoped objects and namespaces.
#[tokio::test]
async fn scope_separates_namespaced_and_cluster_objects() {
    let server = common::server().await;
    let hook = recorder().await;
    let hooks = vec![
        webhook(
            "ns.example.com",
            hook.client_config("/ns"),
            rule(&["CREATE"], &[""], &["*"], "Namespaced"),
        ),
        webhook(
            "cluster.example.com",
            hook.client_config("/cluster"),
            rule(&["CREATE"], &[""], &["*"], "Cluster"),
        ),
    ];
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "scopes", hooks),
    );
    assert_eq!(
        send(
            &server,
            "POST",
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "x"}})
        )
        .await
        .status,
        201
    );
    assert_eq!(
        send(
            &server,
            "POST",
            "/api/v1/namespaces/x/configmaps",
            &cm("c", json!({}))
        )
        .await
        .status,
        201
    );
    let kinds = |p: &str| -> Vec<String> {
        hook.reviews(p)
            .iter()
            .map(|r| r["kind"]["kind"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(kinds("/ns"), ["ConfigMap"]);
    assert_eq!(kinds("/cluster"), ["Namespace"]);
}

async fn guarded(selector_key: &str, selector: Value) -> (ApiServer, WebhookServer) {
    let server = common::server().await;
    let hook =
        WebhookServer::start(|_, r| Reply::ok(deny(r, json!({"code": 403, "message": "guarded"}))))
            .await;
    let mut w = webhook(
        "guard.example.com",
        hook.client_config("/guard"),
        rule(&["*"], &[""], &["configmaps"], "*"),
    );
    w[selector_key] = selector;
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "guard", vec![w]),
    );
    (server, hook)
}

/// `namespaceSelector`: matched against the labels of the request's namespace
/// (`matchLabels` and `matchExpressions`); a selector on a missing namespace is 404.
#[tokio::test]
async fn namespace_selector_matches_namespace_labels() {
    let selector = json!({"matchLabels": {"env": "prod"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["free"]}]});
    let (server, _hook) = guarded("namespaceSelector", selector).await;
    for (ns, labels) in [
        ("prod", json!({"env": "prod"})),
        ("free", json!({"env": "prod", "tier": "free"})),
        ("dev", json!({})),
    ] {
        let body = json!({"metadata": {"name": ns, "labels": labels}});
        assert_eq!(
            send(&server, "POST", "/api/v1/namespaces", &body)
                .await
                .status,
            201
        );
    }
    let create = |ns: &'static str| {
        let server = &server;
        async move {
            send(
                server,
                "POST",
                &format!("/api/v1/namespaces/{ns}/configmaps"),
                &cm("c", json!({})),
            )
            .await
            .status
        }
    };
    assert_eq!(create("prod").await, 403);
    assert_eq!(create("free").await, 201);
    assert_eq!(create("dev").await, 201);
    assert_eq!(create("missing").await, 404);
}

/// `objectSelector`: matched against the object's labels, or the old object's (so a delete
/// of a labelled object is seen).
#[tokio::test]
async fn object_selector_matches_object_or_old_object() {
    let (server, hook) = guarded(
        "objectSelector",
        json!({"matchExpressions": [{"key": "guard", "operator": "Exists"}]}),
    )
    .await;
    let cms = "/api/v1/namespaces/default/configmaps";
    assert_eq!(
        send(&server, "POST", cms, &cm("free", json!({})))
            .await
            .status,
        201
    );
    assert_eq!(
        send(&server, "POST", cms, &cm("kept", json!({"guard": "on"})))
            .await
            .status,
        403
    );
    assert!(hook.reviews("/guard").len() == 1);
    server
        .create_json(cm("seeded", json!({"guard": "on"})))
        .expect("seeded");
    assert_eq!(
        send(&server, "DELETE", &format!("{cms}/seeded"), &Value::Null)
            .await
            .status,
        403
    );
    assert_eq!(
        send(&server, "DELETE", &format!("{cms}/free"), &Value::Null)
            .await
            .status,
        200
    );
    assert_eq!(hook.reviews("/guard").len(), 2);
}

/// A CRD serving v1 (stored) and v2 without conversion webhook.
pub fn two_version_crd(conversion: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "conversion": conversion,
            "versions": [{"name": "v1", "served": true, "storage": true},
                         {"name": "v2", "served": true, "storage": false}]}})
}

/// `matchPolicy`: Equivalent (the default) calls a webhook whose rules name v1 for a request
/// made in v2, sending the object in v1 with `requestKind` v2; Exact does not call it.
#[tokio::test]
async fn match_policy_equivalent_and_exact() {
    let server = common::server().await;
    server
        .create_json(two_version_crd(json!({"strategy": "None"})))
        .expect("crd");
    server.settle().await;
    let hook = recorder().await;
    let v1_only = json!([{"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}]);
    let equivalent = webhook("eq.example.com", hook.client_config("/eq"), v1_only.clone());
    let mut exact = webhook("exact.example.com", hook.client_config("/exact"), v1_only);
    exact["matchPolicy"] = json!("Exact");
    configure(
        &server,
        configuration(
            "ValidatingWebhookConfiguration",
            "policies",
            vec![equivalent, exact],
        ),
    );
    let body = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"x": 1}});
    let r = send(
        &server,
        "POST",
        "/apis/example.com/v2/namespaces/default/widgets",
        &body,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["apiVersion"], "example.com/v2");
    let seen = hook.reviews("/eq");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["kind"]["version"], "v1");
    assert_eq!(seen[0]["requestKind"]["version"], "v2");
    assert_eq!(seen[0]["resource"]["version"], "v1");
    assert_eq!(seen[0]["object"]["apiVersion"], "example.com/v1");
    assert!(hook.reviews("/exact").is_empty());
}
