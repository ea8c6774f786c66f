//! `kubectl explain` of a custom resource: its CRD's schema, published in the OpenAPI v3
//! document of its group version under the GVK kubectl looks up. Skipped (with a notice)
//! when `kubectl` is not installed.

use crate::common::kubectl;

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_rt_apiserver_sim::ApiServer;
use serde_json::json;

/// `kubectl args`: whether it succeeded, and what it printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_reads_a_custom_resources_schema() {
    let Some((server, _dir, session)) =
        kubectl::start("the kubectl explain test", ApiServer::builder()).await
    else {
        return;
    };
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "description": "A widget of the test.",
                    "properties": {"spec": {"type": "object",
                        "description": "What the widget should be.",
                        "properties": {"size": {"type": "integer",
                            "description": "How large, in units."}}}}}}}]}
    }))
    .unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().unwrap());
    crds.create(&PostParams::default(), &crd).await.unwrap();
    testkit::eventually_async("the CRD served", Duration::from_secs(10), || async {
        session
            .run(&["api-resources", "--api-group=example.com"])
            .await
            .1
            .contains("widgets")
    })
    .await;

    let (ok, out) = session.run(&["explain", "widget"]).await;
    assert!(ok, "{out}");
    assert!(out.contains("KIND:       Widget"), "{out}");
    assert!(out.contains("A widget of the test."), "{out}");
    for field in [
        "apiVersion\t<string>",
        "kind\t<string>",
        "metadata\t<Object>",
        "spec\t<Object>",
    ] {
        assert!(out.contains(field), "{field} in {out}");
    }
    let (ok, out) = session.run(&["explain", "widget.spec.size"]).await;
    assert!(ok, "{out}");
    assert!(out.contains("FIELD: size <integer>"), "{out}");
    assert!(out.contains("How large, in units."), "{out}");
    server.shutdown().await;
}
