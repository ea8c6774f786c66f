//! RBAC with a real ServiceAccount token (TokenRequest): allowed and refused requests and
//! the 403 messages (namespaced, cluster-scoped, subresources, named resources), 401 for a
//! bad token, SelfSubjectAccessReview answers, and the whoami review.

use serde_json::{Value, json};

use crate::ctx::Ctx;

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
        json!({"metadata": {"name": "bot"}}),
    )
    .await;
    ctx.setup("POST", &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"), json!({
        "metadata": {"name": "reader"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"], "verbs": ["get"]}]})).await;
    ctx.setup("POST", &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"), json!({
        "metadata": {"name": "reader"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": ns}]})).await;
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        json!({"metadata": {"name": "c"}}),
    )
    .await;
    let r = ctx.setup("POST", &format!("/api/v1/namespaces/{ns}/serviceaccounts/bot/token"),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})).await;
    let v = r.json();
    ctx.note(
        "token-request",
        json!({"status": r.status, "kind": v["kind"], "hasToken": v["status"]["token"].is_string(),
        "expirationSeconds": v["spec"]["expirationSeconds"], "audiences": v["spec"]["audiences"]}),
    );
    let token = v["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Ok(bot) = ctx.target.with_token(&token) else {
        ctx.errors.push("no client with the token".into());
        return;
    };
    let requests: [(&str, &str, String, Value); 10] = [
        (
            "list-allowed",
            "GET",
            // Its own ConfigMap only (a cluster publishes its CA bundles in every namespace).
            format!("/api/v1/namespaces/{ns}/configmaps?fieldSelector=metadata.name%3Dc"),
            Value::Null,
        ),
        (
            "get-allowed",
            "GET",
            format!("/api/v1/namespaces/{ns}/configmaps/c"),
            Value::Null,
        ),
        (
            "get-secret-forbidden",
            "GET",
            format!("/api/v1/namespaces/{ns}/secrets/s"),
            Value::Null,
        ),
        (
            "create-forbidden",
            "POST",
            format!("/api/v1/namespaces/{ns}/configmaps"),
            json!({"metadata": {"name": "x"}}),
        ),
        (
            "list-all-namespaces-forbidden",
            "GET",
            "/api/v1/configmaps".into(),
            Value::Null,
        ),
        (
            "cluster-scoped-forbidden",
            "GET",
            "/api/v1/nodes".into(),
            Value::Null,
        ),
        (
            "named-allowed",
            "GET",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/web"),
            Value::Null,
        ),
        (
            "named-other-forbidden",
            "GET",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/db"),
            Value::Null,
        ),
        (
            "subresource-forbidden",
            "GET",
            format!("/apis/apps/v1/namespaces/{ns}/deployments/web/scale"),
            Value::Null,
        ),
        (
            "other-namespace-forbidden",
            "GET",
            "/api/v1/namespaces/default/configmaps".into(),
            Value::Null,
        ),
    ];
    for (id, method, path, body) in requests {
        let bytes = if body.is_null() {
            vec![]
        } else {
            body.to_string().into_bytes()
        };
        let r = ctx
            .send_as(
                &bot,
                method,
                &path,
                &[("Content-Type", "application/json")],
                bytes,
            )
            .await;
        ctx.record(id, &r);
    }
    let review = |verb: &str, resource: &str, namespace: &str| {
        json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}})
    };
    for (id, body) in [
        ("ssar-allowed", review("list", "configmaps", &ns)),
        ("ssar-denied", review("delete", "configmaps", &ns)),
        // A path only one default role grants: with two (`/healthz`), which binding the real
        // server names as allowing it varies from run to run.
        (
            "ssar-non-resource",
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                           "spec": {"nonResourceAttributes": {"verb": "get", "path": "/apis"}}}),
        ),
    ] {
        let r = ctx
            .send_as(
                &bot,
                "POST",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                &[("Content-Type", "application/json")],
                body.to_string().into_bytes(),
            )
            .await;
        let v = r.json();
        ctx.note(
            id,
            json!({"status": r.status, "kind": v["kind"], "allowed": v["status"]["allowed"],
            "reason": v["status"]["reason"], "denied": v["status"]["denied"]}),
        );
    }
    let r = ctx
        .send_as(
            &bot,
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &[("Content-Type", "application/json")],
            br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#.to_vec(),
        )
        .await;
    let v = r.json();
    ctx.note(
        "whoami",
        json!({"status": r.status, "user": v["status"]["userInfo"]["username"],
        "groups": v["status"]["userInfo"]["groups"]}),
    );
    let Ok(stranger) = ctx.target.with_token("not-a-token") else {
        return;
    };
    let r = ctx
        .send_as(
            &stranger,
            "GET",
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            &[],
            vec![],
        )
        .await;
    ctx.record("bad-token", &r);
    let r = ctx.send_as(&bot, "GET", "/version", &[], vec![]).await;
    ctx.note("version-allowed", json!(r.status));
    let r = ctx.send_as(&bot, "GET", "/apis", &[], vec![]).await;
    ctx.note("discovery-allowed", json!(r.status));
}
