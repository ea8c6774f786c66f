//! `examples/manifests/` as a cluster admin would apply it: the CRD for real, then every
//! manifest with `kubectl apply --dry-run=server` (the server validates and admits each one,
//! and stores nothing); `kubectl explain` then reads the Foo's schema from the CRD. Skipped,
//! with a notice, when kubectl is not installed.

use crate::common;

use apiserver_sim::ApiServer;
use common::kubectl::{kubectl, kubectl_installed};
use k8s_openapi::api::apps::v1::Deployment;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifests_pass_a_server_dry_run() {
    if !kubectl_installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the manifests' dry run");
        return;
    }
    let server = ApiServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, cache) = (dir.path().join("kubeconfig"), dir.path().join("cache"));
    server.write_kubeconfig(&kubeconfig).unwrap();
    let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests");
    let crd = format!("{manifests}/crd.yaml");
    kubectl(&kubeconfig, &cache, &["apply", "-f", &crd])
        .await
        .expect("the CRD applies");
    kubectl(
        &kubeconfig,
        &cache,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=30s",
            "crd/foos.samplecontroller.k8s.io",
        ],
    )
    .await
    .expect("the CRD is established");
    let out = kubectl(
        &kubeconfig,
        &cache,
        &["apply", "--dry-run=server", "-f", manifests],
    )
    .await
    .unwrap_or_else(|stderr| panic!("the manifests pass a server dry run: {stderr}"));
    for object in [
        "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io",
        "clusterrolebinding.rbac.authorization.k8s.io/sample-controller",
        "clusterrole.rbac.authorization.k8s.io/sample-controller",
        "role.rbac.authorization.k8s.io/sample-controller",
        "rolebinding.rbac.authorization.k8s.io/sample-controller",
        "serviceaccount/sample-controller",
        "deployment.apps/sample-controller",
        "foo.samplecontroller.k8s.io/example-foo",
    ] {
        assert!(
            out.lines()
                .any(|line| line.starts_with(object) && line.ends_with("(server dry run)")),
            "{object} dry-run applied: {out}"
        );
    }
    assert!(
        server
            .list::<Deployment>()
            .iter()
            .all(|d| d.metadata.name.as_deref() != Some("sample-controller")),
        "a dry run stores nothing"
    );

    // The applied CRD's schema is what `kubectl explain foo` reads, doc comments included.
    let out = kubectl(&kubeconfig, &cache, &["explain", "foo.spec"])
        .await
        .unwrap_or_else(|stderr| panic!("kubectl explain foo.spec: {stderr}"));
    assert!(out.contains("KIND:       Foo"), "{out}");
    assert!(out.contains("deploymentName\t<string>"), "{out}");
    assert!(out.contains("replicas\t<integer>"), "{out}");
    assert!(out.contains("Desired replicas of the Deployment"), "{out}");
    server.shutdown().await;
}
