//! kubectl against the simulator: apply a CRD and a custom resource, get both, watch
//! configmaps, delete. Skipped (with a notice) when `kubectl` is not installed.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> (bool, String) {
    let out = testkit::kubectl::run(kubeconfig, cache, args);
    (out.success, out.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_get_watch_delete() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl test");
        return;
    }
    let server = common::server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let cache = dir.path().join("cache");
    server.write_kubeconfig(&kc).expect("kubeconfig");
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.samplecontroller.k8s.io"},
        "spec": {"group": "samplecontroller.k8s.io", "scope": "Namespaced",
            "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "deploymentName": {"type": "string"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}}}]}
    });
    let crd_file = dir.path().join("crd.json");
    std::fs::write(&crd_file, crd.to_string()).expect("write crd");
    let cr_file = dir.path().join("foo.json");
    std::fs::write(
        &cr_file,
        json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
               "metadata": {"name": "example-foo"}, "spec": {"deploymentName": "example", "replicas": 1}})
        .to_string(),
    )
    .expect("write cr");

    let run = |args: Vec<String>| {
        let kc = kc.clone();
        let cache = cache.clone();
        tokio::task::spawn_blocking(move || {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            kubectl(&kc, &cache, &a)
        })
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();

    let (ok, out) = run(s(&["apply", "-f", crd_file.to_str().unwrap_or_default()]))
        .await
        .expect("join");
    assert!(ok, "apply crd: {out}");
    let (ok, out) = run(s(&[
        "wait",
        "--for=condition=Established",
        "crd/foos.samplecontroller.k8s.io",
        "--timeout=20s",
    ]))
    .await
    .expect("join");
    assert!(ok, "wait: {out}");
    let (ok, out) = run(s(&["apply", "-f", cr_file.to_str().unwrap_or_default()]))
        .await
        .expect("join");
    assert!(ok, "apply cr: {out}");
    // Applying again is a no-op patch.
    let (ok, out) = run(s(&["apply", "-f", cr_file.to_str().unwrap_or_default()]))
        .await
        .expect("join");
    assert!(ok, "re-apply cr: {out}");
    let (ok, out) = run(s(&["get", "crd"])).await.expect("join");
    assert!(
        ok && out.contains("foos.samplecontroller.k8s.io"),
        "get crd: {out}"
    );
    let (ok, out) = run(s(&["get", "foos"])).await.expect("join");
    assert!(ok && out.contains("example-foo"), "get foos: {out}");
    let (ok, out) = run(s(&["get", "foo", "example-foo", "-o", "json"]))
        .await
        .expect("join");
    assert!(
        ok && out.contains("\"deploymentName\": \"example\""),
        "get foo -o json: {out}"
    );

    // Imperative generators send protobuf bodies for these simple types.
    let (ok, out) = run(s(&[
        "create",
        "configmap",
        "imperative",
        "--from-literal=a=b",
    ]))
    .await
    .expect("join");
    assert!(ok, "create configmap: {out}");
    let (ok, out) = run(s(&[
        "create",
        "secret",
        "generic",
        "imperative",
        "--from-literal=p=q",
    ]))
    .await
    .expect("join");
    assert!(ok, "create secret: {out}");
    let (ok, out) = run(s(&["create", "namespace", "imperative"]))
        .await
        .expect("join");
    assert!(ok, "create namespace: {out}");
    let secret = server
        .objects("", "secrets")
        .into_iter()
        .find(|o| o["metadata"]["name"] == "imperative");
    assert_eq!(secret.map(|s| s["data"]["p"].clone()), Some(json!("cQ==")));

    // kubectl get cm -w sees a change made through the API.
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("watched".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create cm");
    let mut child = Command::new("kubectl")
        .args(["get", "cm", "-w", "--output-watch-events"])
        .env("KUBECONFIG", &kc)
        .env("KUBECACHEDIR", &cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kubectl get -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_line = |rx: &mpsc::Receiver<String>, needle: &str| -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(100))
                && l.contains(needle)
            {
                return true;
            }
        }
        false
    };
    let rx = tokio::task::spawn_blocking(move || {
        let seen = wait_line(&rx, "watched");
        (seen, rx)
    })
    .await
    .expect("join");
    assert!(rx.0, "initial listing shows the configmap");
    cms.patch(
        "watched",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .expect("patch");
    let (seen, _) = tokio::task::spawn_blocking(move || (wait_line(&rx.1, "MODIFIED"), ()))
        .await
        .expect("join");
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen, "kubectl get -w saw the change");

    // Delete completes (kubectl waits for the object to be gone).
    let (ok, out) = run(s(&["delete", "foo", "example-foo"]))
        .await
        .expect("join");
    assert!(ok, "delete foo: {out}");
    let (ok, out) = run(s(&["delete", "-f", crd_file.to_str().unwrap_or_default()]))
        .await
        .expect("join");
    assert!(ok, "delete crd: {out}");
    let (ok, out) = run(s(&["delete", "cm", "watched"])).await.expect("join");
    assert!(ok, "delete cm: {out}");
    assert!(server.objects("samplecontroller.k8s.io", "foos").is_empty());
}
