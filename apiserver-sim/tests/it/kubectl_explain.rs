//! `kubectl explain` of a custom resource (its CRD's schema) and of built-in kinds (their
//! k8s-openapi types' schemas), published in the OpenAPI v3 document of their group version
//! under the GVK kubectl looks up. Skipped (with a notice) when `kubectl` is not installed.

use crate::common::kubectl;

use std::time::Duration;

use apiserver_sim::ApiServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
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
    // `metadata` is the ObjectMeta schema the document publishes, as on a real server.
    for field in [
        "apiVersion\t<string>",
        "kind\t<string>",
        "metadata\t<ObjectMeta>",
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

/// `kubectl explain` of built-in kinds: their schemas come from the k8s-openapi types, with
/// the API reference's descriptions, nested fields and references between group versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_reads_built_in_kinds() {
    let Some((server, _dir, session)) =
        kubectl::start("the kubectl explain test", ApiServer::builder()).await
    else {
        return;
    };
    let (ok, out) = session.run(&["explain", "deployment"]).await;
    assert!(ok, "{out}");
    assert!(out.contains("GROUP:      apps"), "{out}");
    assert!(out.contains("KIND:       Deployment"), "{out}");
    assert!(out.contains("VERSION:    v1"), "{out}");
    assert!(
        out.contains("declarative updates for Pods and ReplicaSets"),
        "{out}"
    );
    for field in [
        "metadata\t<ObjectMeta>",
        "spec\t<DeploymentSpec>",
        "status\t<DeploymentStatus>",
    ] {
        assert!(out.contains(field), "{field} in {out}");
    }
    // A field deep inside, through the pod template that core/v1 defines.
    let (ok, out) = session
        .run(&["explain", "deployment.spec.template.spec.containers.image"])
        .await;
    assert!(ok, "{out}");
    assert!(out.contains("FIELD: image <string>"), "{out}");
    assert!(out.contains("Container image name"), "{out}");
    // A core kind, recursively.
    let (ok, out) = session.run(&["explain", "configmap", "--recursive"]).await;
    assert!(ok, "{out}");
    assert!(out.contains("KIND:       ConfigMap"), "{out}");
    for field in [
        "binaryData\t<map[string]string>",
        "data\t<map[string]string>",
        "immutable\t<boolean>",
    ] {
        assert!(out.contains(field), "{field} in {out}");
    }
    // An unknown field is an error, as on a real server.
    let (ok, out) = session.run(&["explain", "deployment.spec.nonsense"]).await;
    assert!(!ok, "{out}");
    assert!(out.contains("nonsense"), "{out}");
    server.shutdown().await;
}
