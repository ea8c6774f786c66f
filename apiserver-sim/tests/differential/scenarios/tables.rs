//! Tables as `kubectl get` asks for them: column definitions and cells of ConfigMaps,
//! Deployments, Secrets, a custom resource with printer columns, `includeObject`, a single
//! object, and an empty list.

use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::scenarios::{crd, subresources::deployment};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// Columns and rows (cells and the object's name) of a Table.
fn table(v: &Value) -> Value {
    let rows: Vec<Value> = v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    json!({"cells": r["cells"], "object": r["object"]["metadata"]["name"],
            "objectKind": r["object"]["kind"]})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"kind": v["kind"], "apiVersion": v["apiVersion"], "columns": v["columnDefinitions"],
           "rows": rows, "code": v["code"], "message": v["message"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    crd::install_widgets(ctx).await;
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}),
    )
    .await;
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/secrets"),
        json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "MQ=="}}),
    )
    .await;
    ctx.setup(
        "POST",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        deployment("web", 2),
    )
    .await;
    // A cluster's deployment controller writes the status the table shows: wait for it.
    let web = format!("/apis/apps/v1/namespaces/{ns}/deployments/web");
    crate::scenarios::subresources::settle(ctx, "deployment-settled", &web).await;
    let widgets = format!("/apis/{}/v1/namespaces/{ns}/widgets", crd::group(ctx));
    ctx.setup("POST", &widgets, crd::widget(ctx, "w", 4)).await;
    let reads = [
        (
            "configmaps",
            format!("/api/v1/namespaces/{ns}/configmaps?fieldSelector=metadata.name%3Dc"),
        ),
        ("configmap", format!("/api/v1/namespaces/{ns}/configmaps/c")),
        ("secrets", format!("/api/v1/namespaces/{ns}/secrets")),
        (
            "deployments",
            format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        ),
        (
            "deployments-include-object",
            format!("/apis/apps/v1/namespaces/{ns}/deployments?includeObject=Object"),
        ),
        (
            "deployments-include-none",
            format!("/apis/apps/v1/namespaces/{ns}/deployments?includeObject=None"),
        ),
        ("widgets", widgets.clone()),
        ("empty", format!("/api/v1/namespaces/{ns}/services")),
        ("namespace", format!("/api/v1/namespaces/{ns}")),
        (
            "serviceaccounts",
            format!("/api/v1/namespaces/{ns}/serviceaccounts"),
        ),
    ];
    for (id, path) in reads {
        let r = ctx
            .send("GET", &path, &[("Accept", TABLE)], Vec::new())
            .await;
        ctx.note(
            id,
            json!({"status": r.status, "type": r.content_type, "table": table(&r.json())}),
        );
    }
    let r = ctx
        .send(
            "GET",
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    ctx.note(
        "table-only-accept",
        json!({"status": r.status, "type": r.content_type}),
    );
    let r = ctx
        .send(
            "GET",
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            &[("Accept", "application/json;as=Table;v=v9;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    ctx.record("table-unknown-version", &r);
    crate::scenarios::not_found::remove_widgets(ctx).await;
}
