//! 404s of paths the server does not serve: unknown groups, versions, resources,
//! subresources, scopes and top-level paths, for built-in and custom resource groups.

use serde_json::Value;

use crate::ctx::Ctx;

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    crate::scenarios::crd::install_widgets(ctx).await;
    let group = ctx.unique("nf") + ".example.com";
    let widgets = format!(
        "/apis/{}/v1/namespaces/{ns}/widgets",
        crate::scenarios::crd::group(ctx)
    );
    ctx.setup("POST", &widgets, crate::scenarios::crd::widget(ctx, "w", 1))
        .await;
    ctx.setup(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        serde_json::json!({"metadata": {"name": "c"}}),
    )
    .await;
    let wg = crate::scenarios::crd::group(ctx);
    let paths = [
        ("top-level", "/nope".to_string()),
        ("unknown-group", format!("/apis/{group}")),
        ("unknown-group-version", format!("/apis/{group}/v1")),
        ("unknown-group-resource", format!("/apis/{group}/v1/things")),
        ("builtin-unknown-version", "/apis/apps/v9".to_string()),
        (
            "builtin-unknown-version-resource",
            "/apis/apps/v9/deployments".to_string(),
        ),
        ("core-unknown-version", "/api/v2".to_string()),
        ("core-unknown-resource", "/api/v1/things".to_string()),
        (
            "builtin-unknown-resource",
            format!("/apis/apps/v1/namespaces/{ns}/things"),
        ),
        (
            "cluster-resource-in-namespace",
            format!("/api/v1/namespaces/{ns}/nodes/x"),
        ),
        (
            "namespaced-name-without-namespace",
            "/api/v1/configmaps/c".to_string(),
        ),
        (
            "builtin-unknown-subresource",
            format!("/api/v1/namespaces/{ns}/configmaps/c/status"),
        ),
        (
            "builtin-path-too-long",
            format!("/api/v1/namespaces/{ns}/configmaps/c/a/b"),
        ),
        ("crd-unknown-version", format!("/apis/{wg}/v9/widgets")),
        ("crd-unknown-resource", format!("/apis/{wg}/v1/gadgets")),
        (
            "crd-name-without-namespace",
            format!("/apis/{wg}/v1/widgets/w"),
        ),
        ("crd-unknown-subresource", format!("{widgets}/w/nosuch")),
        ("crd-missing-object", format!("{widgets}/missing")),
        ("openapi-unknown", format!("/openapi/v3/apis/{group}/v1")),
        (
            "missing-namespace-object",
            "/api/v1/namespaces/no-such-ns/configmaps/x".to_string(),
        ),
    ];
    for (id, path) in paths {
        ctx.req(id, "GET", &path, Value::Null).await;
    }
    remove_widgets(ctx).await;
}

/// Deletes the scenario's Widget CRD.
pub async fn remove_widgets(ctx: &mut Ctx<'_>) {
    let path = format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{}",
        crate::scenarios::crd::group(ctx)
    );
    ctx.setup("DELETE", &path, Value::Null).await;
}
