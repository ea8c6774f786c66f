//! CustomResourceDefinitions: the served CRD after establishment, schema validation errors
//! (types, bounds, enums, patterns, required fields), pruning of unknown fields, defaults,
//! an invalid CRD refused, and the status and scale subresources of custom resources.

use std::time::Duration;

use serde_json::{Value, json};

use crate::ctx::{Ctx, MERGE};

/// The scenario's custom resource group.
pub fn group(ctx: &Ctx<'_>) -> String {
    format!("{}.example.com", ctx.ns())
}

/// A Widget of the scenario's namespace.
pub fn widget(ctx: &Ctx<'_>, name: &str, replicas: i64) -> Value {
    json!({"apiVersion": format!("{}/v1", group(ctx)), "kind": "Widget",
           "metadata": {"name": name, "namespace": ctx.ns(), "labels": {"app": "w"}},
           "spec": {"replicas": replicas, "color": "red"}})
}

/// The Widget CRD: a schema with bounds, an enum, a pattern, a default and a required field;
/// status and scale subresources; printer columns.
pub fn widget_crd(ctx: &Ctx<'_>) -> Value {
    let group = group(ctx);
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                      "listKind": "WidgetList", "shortNames": ["wg"], "categories": ["all"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                "schema": {"openAPIV3Schema": {"type": "object", "required": ["spec"], "properties": {
                    "spec": {"type": "object", "required": ["replicas"], "properties": {
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                        "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
                        "code": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}}}]}})
}

/// Creates the Widget CRD and waits (5 s at most) until its resources, its discovery
/// document and its OpenAPI v3 document are served.
pub async fn install_widgets(ctx: &mut Ctx<'_>) {
    let crd = widget_crd(ctx);
    ctx.setup(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    let group = group(ctx);
    let path = format!("/apis/{group}/v1/namespaces/{}/widgets", ctx.ns());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline {
        let served = ctx.setup("GET", &path, Value::Null).await.status == 200
            && ctx
                .setup("GET", &format!("/apis/{group}/v1"), Value::Null)
                .await
                .status
                == 200
            && ctx.setup("GET", "/openapi/v3", Value::Null).await.json()["paths"]
                .get(format!("apis/{group}/v1"))
                .is_some();
        if served {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    install_widgets(ctx).await;
    let ns = ctx.ns();
    let crd_path = format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{}",
        group(ctx)
    );
    let r = ctx.setup("GET", &crd_path, Value::Null).await;
    let conditions: Vec<Value> = r.json()["status"]["conditions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
                .collect()
        })
        .unwrap_or_default();
    ctx.note("established-conditions", json!(conditions));
    ctx.note(
        "accepted-names",
        r.json()["status"]["acceptedNames"].clone(),
    );
    let widgets = format!("/apis/{}/v1/namespaces/{ns}/widgets", group(ctx));
    ctx.req(
        "create-defaults",
        "POST",
        &widgets,
        json!({"apiVersion": format!("{}/v1", group(ctx)),
        "kind": "Widget", "metadata": {"name": "d"}, "spec": {"replicas": 2, "extra": "pruned"},
        "unknownTop": 1}),
    )
    .await;
    let invalid = [
        ("too-many", json!({"replicas": 11})),
        ("too-few", json!({"replicas": 0})),
        ("wrong-type", json!({"replicas": "two"})),
        ("enum", json!({"replicas": 1, "color": "green"})),
        (
            "pattern-and-length",
            json!({"replicas": 1, "code": "ABCDEFGHIJ"}),
        ),
        ("missing-required", json!({"color": "red"})),
    ];
    for (id, spec) in invalid {
        ctx.req(
            &format!("invalid-{id}"),
            "POST",
            &widgets,
            json!({"apiVersion": format!("{}/v1", group(ctx)),
            "kind": "Widget", "metadata": {"name": format!("i-{id}")}, "spec": spec}),
        )
        .await;
    }
    ctx.req(
        "missing-spec",
        "POST",
        &widgets,
        json!({"apiVersion": format!("{}/v1", group(ctx)),
        "kind": "Widget", "metadata": {"name": "nospec"}}),
    )
    .await;
    let w = widget(ctx, "w", 3);
    ctx.req("create", "POST", &widgets, w).await;
    let mut w = ctx
        .setup("GET", &format!("{widgets}/w"), Value::Null)
        .await
        .json();
    w["status"] = json!({"replicas": 3, "selector": "app=w"});
    w["spec"]["replicas"] = json!(9);
    ctx.req("status-write", "PUT", &format!("{widgets}/w/status"), w)
        .await;
    ctx.get("scale", &format!("{widgets}/w/scale")).await;
    ctx.req_ct(
        "scale-patch",
        "PATCH",
        &format!("{widgets}/w/scale"),
        MERGE,
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    ctx.req_ct(
        "scale-patch-invalid",
        "PATCH",
        &format!("{widgets}/w/scale"),
        MERGE,
        r#"{"spec":{"replicas":50}}"#,
    )
    .await;
    ctx.get("after-scale", &format!("{widgets}/w")).await;
    ctx.req("invalid-crd", "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "wrong.name"}, "spec": {"group": "x.example.com", "scope": "Cluster",
               "names": {"plural": "things", "kind": "Thing"},
               "versions": [{"name": "v1", "served": true, "storage": false,
                             "schema": {"openAPIV3Schema": {"type": "object"}}}]}})).await;
    ctx.setup("DELETE", &crd_path, Value::Null).await;
}
