//! Create, read, update, delete of ConfigMaps and Secrets: answers, `AlreadyExists`,
//! `NotFound`, `Invalid` with causes, optimistic concurrency (stale resourceVersion, delete
//! preconditions), no-op updates, generateName, dry runs, malformed bodies, wrong kinds,
//! mismatched names and namespaces, verbs not allowed.

use serde_json::{Value, json};

use crate::ctx::{Ctx, JSON};

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"app": "x"}}, "data": {"k": "v"}});
    let created = ctx.req("create", "POST", &cms, cm.clone()).await.json();
    ctx.req("create-again", "POST", &cms, cm.clone()).await;
    ctx.get("get", &format!("{cms}/a")).await;
    ctx.get("get-missing", &format!("{cms}/missing")).await;
    // No-op update: same object back.
    let r = ctx
        .req("update-noop", "PUT", &format!("{cms}/a"), created.clone())
        .await
        .json();
    ctx.note(
        "noop-keeps-rv",
        json!(r["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]),
    );
    let mut changed = created.clone();
    changed["data"]["k"] = json!("w");
    let r = ctx
        .req("update", "PUT", &format!("{cms}/a"), changed.clone())
        .await
        .json();
    let rv_of = |v: &Value| {
        v["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
    };
    ctx.note("update-increases-rv", json!(rv_of(&r) > rv_of(&created)));
    changed["data"]["k"] = json!("stale");
    ctx.req("update-stale", "PUT", &format!("{cms}/a"), changed.clone())
        .await;
    let mut no_rv = changed.clone();
    no_rv["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    ctx.req("update-without-rv", "PUT", &format!("{cms}/a"), no_rv)
        .await;
    let mut renamed = changed.clone();
    renamed["metadata"]["name"] = json!("b");
    ctx.req("update-name-mismatch", "PUT", &format!("{cms}/a"), renamed)
        .await;
    ctx.req(
        "update-missing",
        "PUT",
        &format!("{cms}/zzz"),
        json!({"metadata": {"name": "zzz"}}),
    )
    .await;
    let mut other_ns = cm.clone();
    other_ns["metadata"]["name"] = json!("c");
    other_ns["metadata"]["namespace"] = json!("default");
    ctx.req("create-namespace-mismatch", "POST", &cms, other_ns)
        .await;
    ctx.req(
        "create-generate-name",
        "POST",
        &cms,
        json!({"metadata": {"generateName": "cm-gen-"}}),
    )
    .await;
    ctx.req("create-no-name", "POST", &cms, json!({"metadata": {}}))
        .await;
    ctx.req(
        "create-bad-name",
        "POST",
        &cms,
        json!({"metadata": {"name": "Bad_Name"}}),
    )
    .await;
    ctx.req(
        "create-bad-label",
        "POST",
        &cms,
        json!({"metadata": {"name": "l", "labels": {"a b": "c"}}}),
    )
    .await;
    ctx.req(
        "create-bad-data-key",
        "POST",
        &cms,
        json!({"metadata": {"name": "k"}, "data": {"a/b": "c"}}),
    )
    .await;
    ctx.req(
        "create-wrong-kind",
        "POST",
        &cms,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    )
    .await;
    ctx.req(
        "create-wrong-version",
        "POST",
        &cms,
        json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "s"}}),
    )
    .await;
    ctx.req_ct("create-malformed", "POST", &cms, JSON, "{\"metadata\": ")
        .await;
    ctx.req_ct(
        "create-unsupported-type",
        "POST",
        &cms,
        "text/plain",
        "hello",
    )
    .await;
    ctx.req(
        "create-with-rv",
        "POST",
        &cms,
        json!({"metadata": {"name": "rv", "resourceVersion": "5"}}),
    )
    .await;
    ctx.req(
        "create-dry-run",
        "POST",
        &format!("{cms}?dryRun=All"),
        json!({"metadata": {"name": "dry"}}),
    )
    .await;
    ctx.get("get-dry-run", &format!("{cms}/dry")).await;
    ctx.req(
        "create-bad-dry-run",
        "POST",
        &format!("{cms}?dryRun=Some"),
        json!({"metadata": {"name": "dry2"}}),
    )
    .await;
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    ctx.req(
        "secret-string-data",
        "POST",
        &secrets,
        json!({"metadata": {"name": "s"},
        "stringData": {"user": "admin"}, "type": "Opaque"}),
    )
    .await;
    ctx.req(
        "secret-bad-base64",
        "POST",
        &secrets,
        json!({"metadata": {"name": "s2"}, "data": {"x": "%%%"}}),
    )
    .await;
    // Deletes: preconditions, missing, the deleted object's answer.
    ctx.req(
        "delete-precondition-uid",
        "DELETE",
        &format!("{cms}/a"),
        json!({"preconditions": {"uid": "6b2d3a9c-0000-4000-8000-000000000000"}}),
    )
    .await;
    ctx.req(
        "delete-precondition-rv",
        "DELETE",
        &format!("{cms}/a"),
        json!({"preconditions": {"resourceVersion": "1"}}),
    )
    .await;
    ctx.req("delete", "DELETE", &format!("{cms}/a"), Value::Null)
        .await;
    ctx.req("delete-missing", "DELETE", &format!("{cms}/a"), Value::Null)
        .await;
    ctx.req(
        "delete-collection",
        "DELETE",
        &format!("{cms}?labelSelector=app%3Dnone"),
        Value::Null,
    )
    .await;
    ctx.req(
        "method-not-allowed",
        "POST",
        &format!("{cms}/x"),
        json!({"metadata": {"name": "x"}}),
    )
    .await;
    ctx.req(
        "create-on-missing-namespace",
        "POST",
        "/api/v1/namespaces/no-such-ns-at-all/configmaps",
        json!({"metadata": {"name": "x"}}),
    )
    .await;
}
