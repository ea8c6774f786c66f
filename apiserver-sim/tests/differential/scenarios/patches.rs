//! Patches on built-in kinds: strategic merge (lists merged by their keys, `$patch: delete`,
//! `$retainKeys`, `$setElementOrder`), JSON merge (null deletes, lists replaced), JSON patch
//! (add, remove, replace, test, bad paths), malformed and unsupported patches.

use serde_json::{Value, json};

use crate::ctx::{Ctx, JSON_PATCH, MERGE, STRATEGIC};
use crate::scenarios::subresources::deployment;

fn containers(v: &Value) -> Value {
    json!({"code": v["code"], "message": v["message"],
           "containers": v["spec"]["template"]["spec"]["containers"],
           "labels": v["metadata"]["labels"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let d = format!("/apis/apps/v1/namespaces/{ns}/deployments/web");
    let mut dep = deployment("web", 1);
    dep["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
        {"name": "b", "image": "b:1"}]);
    ctx.setup(
        "POST",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        dep,
    )
    .await;
    let patches: [(&str, &str, &str); 14] = [
        (
            "smp-merge-by-name",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}"#,
        ),
        (
            "smp-add-container",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"c:1"}]}}}}"#,
        ),
        (
            "smp-env-merge",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"3"},{"name":"Z","value":"4"}]}]}}}}"#,
        ),
        (
            "smp-delete-directive",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"c","$patch":"delete"}]}}}}"#,
        ),
        (
            "smp-delete-env-null",
            STRATEGIC,
            r#"{"metadata":{"labels":{"app":null,"n":"1"}}}"#,
        ),
        (
            "smp-set-element-order",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"b","image":"b:3"}]}}}}"#,
        ),
        (
            "smp-invalid-directive",
            STRATEGIC,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"explode"}]}}}}"#,
        ),
        (
            "merge-replaces-list",
            MERGE,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:9"}]}}}}"#,
        ),
        (
            "merge-null-deletes",
            MERGE,
            r#"{"metadata":{"labels":{"n":null}}}"#,
        ),
        (
            "json-patch-add",
            JSON_PATCH,
            r#"[{"op":"add","path":"/metadata/labels/j","value":"1"}]"#,
        ),
        (
            "json-patch-test-fails",
            JSON_PATCH,
            r#"[{"op":"test","path":"/metadata/labels/j","value":"2"}]"#,
        ),
        (
            "json-patch-bad-path",
            JSON_PATCH,
            r#"[{"op":"remove","path":"/metadata/labels/nope"}]"#,
        ),
        ("json-patch-not-array", JSON_PATCH, r#"{"op":"add"}"#),
        ("merge-malformed", MERGE, r#"{"metadata":"#),
    ];
    for (id, ct, body) in patches {
        let r = ctx
            .send(
                "PATCH",
                &d,
                &[("Content-Type", ct)],
                body.as_bytes().to_vec(),
            )
            .await;
        ctx.note(
            id,
            json!({"status": r.status, "result": containers(&r.json())}),
        );
    }
    ctx.req_ct(
        "unsupported-patch-type",
        "PATCH",
        &d,
        "application/xml",
        "<x/>",
    )
    .await;
    ctx.req_ct(
        "smp-on-custom-resource-kind-missing",
        "PATCH",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments/none"),
        STRATEGIC,
        "{}",
    )
    .await;
    let cm = format!("/api/v1/namespaces/{ns}/configmaps/p");
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        json!({"metadata": {"name": "p"}, "data": {"a": "1"}}),
    )
    .await;
    ctx.req_ct(
        "json-patch-replace-data",
        "PATCH",
        &cm,
        JSON_PATCH,
        r#"[{"op":"replace","path":"/data/a","value":"2"}]"#,
    )
    .await;
    ctx.req_ct(
        "merge-changes-name",
        "PATCH",
        &cm,
        MERGE,
        r#"{"metadata":{"name":"q"}}"#,
    )
    .await;
    ctx.req_ct("merge-noop", "PATCH", &cm, MERGE, r#"{"data":{"a":"2"}}"#)
        .await;
}
