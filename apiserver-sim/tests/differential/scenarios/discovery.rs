//! Discovery and OpenAPI: the legacy documents (`/api`, `/apis/apps`, `/apis/apps/v1`, a
//! custom group's group and resource list), the aggregated documents' entries for `apps` and a
//! custom group, and the OpenAPI v3 document of a custom group version (paths and schemas) and
//! v2's definition of the custom kind.

use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::scenarios::crd;

const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Resources of a resource list without their storage version hashes.
fn resources(v: &Value) -> Value {
    let mut out: Vec<Value> = v["resources"].as_array().cloned().unwrap_or_default();
    for r in &mut out {
        if let Some(m) = r.as_object_mut() {
            m.remove("storageVersionHash");
        }
    }
    json!({"kind": v["kind"], "groupVersion": v["groupVersion"], "resources": out})
}

/// The entry of `group` in an aggregated discovery list.
fn aggregated_entry(v: &Value, group: &str) -> Value {
    v["items"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .find(|i| i["metadata"]["name"] == group)
                .cloned()
        })
        .unwrap_or(Value::Null)
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    crd::install_widgets(ctx).await;
    let group = crd::group(ctx);
    let r = ctx.setup("GET", "/api", Value::Null).await.json();
    ctx.note(
        "core-versions",
        json!({"kind": r["kind"], "versions": r["versions"]}),
    );
    ctx.get("apps-group", "/apis/apps").await;
    let r = ctx.setup("GET", "/apis/apps/v1", Value::Null).await.json();
    ctx.note("apps-v1", resources(&r));
    let r = ctx.setup("GET", "/apis/batch/v1", Value::Null).await.json();
    ctx.note("batch-v1", resources(&r));
    let r = ctx
        .setup("GET", "/apis/coordination.k8s.io/v1", Value::Null)
        .await
        .json();
    ctx.note("coordination-v1", resources(&r));
    ctx.get("custom-group", &format!("/apis/{group}")).await;
    let r = ctx
        .setup("GET", &format!("/apis/{group}/v1"), Value::Null)
        .await
        .json();
    ctx.note("custom-v1", resources(&r));
    let r = ctx.setup("GET", "/apis", Value::Null).await.json();
    let entry = r["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["name"] == group.as_str()).cloned());
    ctx.note("legacy-groups-entry", entry.unwrap_or(Value::Null));
    let r = ctx
        .send("GET", "/apis", &[("Accept", AGGREGATED)], Vec::new())
        .await;
    ctx.note("aggregated-type", json!(r.content_type));
    let v = r.json();
    ctx.note("aggregated-apps", aggregated_entry(&v, "apps"));
    ctx.note("aggregated-custom", aggregated_entry(&v, &group));
    let r = ctx
        .send("GET", "/api", &[("Accept", AGGREGATED)], Vec::new())
        .await;
    let core = r.json()["items"][0]["versions"][0]["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| {
                    matches!(
                        r["resource"].as_str(),
                        Some("configmaps" | "pods" | "namespaces")
                    )
                })
                .cloned()
                .collect::<Vec<_>>()
        });
    ctx.note("aggregated-core-sample", json!(core));
    let r = ctx
        .send(
            "GET",
            &format!("/openapi/v3/apis/{group}/v1"),
            &[],
            Vec::new(),
        )
        .await;
    let v = r.json();
    let paths: Vec<String> = v["paths"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let schemas: Vec<String> = v["components"]["schemas"]
        .as_object()
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default();
    ctx.note(
        "openapi-v3-paths",
        json!({"status": r.status, "paths": paths}),
    );
    ctx.note("openapi-v3-schemas", json!(schemas));
    let index = ctx.setup("GET", "/openapi/v3", Value::Null).await.json();
    ctx.note(
        "openapi-v3-index-has-group",
        json!(index["paths"].get(format!("apis/{group}/v1")).is_some()),
    );
    let r = ctx
        .send(
            "GET",
            "/openapi/v2",
            &[("Accept", "application/json")],
            Vec::new(),
        )
        .await;
    let v = r.json();
    // This scenario's Widget only: a shared cluster may serve other groups' Widgets.
    let own: Vec<&str> = group.split('.').rev().collect();
    let own = format!("{}.v1.Widget", own.join("."));
    let kind: Vec<&String> = v["definitions"]
        .as_object()
        .map(|d| d.keys().filter(|k| **k == own).collect())
        .unwrap_or_default();
    ctx.note(
        "openapi-v2-widget",
        json!({"status": r.status, "definitions": kind}),
    );
    let version = ctx.setup("GET", "/version", Value::Null).await.json();
    ctx.note(
        "version-fields",
        json!(
            version
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
        ),
    );
    crate::scenarios::not_found::remove_widgets(ctx).await;
}
