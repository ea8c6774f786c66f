//! `kubectl apply --server-side` against the simulator: two field managers applying
//! different values to one field; the second is refused with kube-apiserver's conflict
//! message and wins with `--force-conflicts`. Skipped (with a notice) when `kubectl` is
//! not installed.
//!
//! Source: Kubernetes docs, "Server-Side Apply": "Conflicts" (and kubectl's `apply
//! --server-side`, `--field-manager`, `--force-conflicts` flags).

use crate::apply::{entry, owned};
use crate::common;

use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use serde_json::json;

/// Runs kubectl; success, stdout and stderr.
fn kubectl(kubeconfig: &Path, cache: &Path, args: &[String]) -> (bool, String, String) {
    let out = testkit::kubectl::run(kubeconfig, cache, args);
    (out.success, out.stdout, out.stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_apply_conflicts_and_force() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl apply test");
        return;
    }
    let server = common::server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let cache = dir.path().join("cache");
    server.write_kubeconfig(&kc).expect("kubeconfig");
    let write = |name: &str, value: &str| {
        let file = dir.path().join(name);
        let yaml = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  key: \"{value}\"\n"
        );
        std::fs::write(&file, yaml).expect("write manifest");
        file.to_string_lossy().to_string()
    };
    let one = write("one.yaml", "from-one");
    let two = write("two.yaml", "from-two");
    let run = |args: Vec<String>| {
        let (kc, cache) = (kc.clone(), cache.clone());
        tokio::task::spawn_blocking(move || kubectl(&kc, &cache, &args))
    };
    let apply = |file: &str, manager: &str, extra: &[&str]| {
        let mut args: Vec<String> = ["apply", "--server-side", "-f", file]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(format!("--field-manager={manager}"));
        args.extend(extra.iter().map(|s| s.to_string()));
        run(args)
    };

    let (ok, out, err) = apply(&one, "mgr-one", &[]).await.expect("join");
    assert!(ok, "first apply: {out}{err}");
    assert!(out.contains("configmap/shared serverside-applied"), "{out}");

    let (ok, out, err) = apply(&two, "mgr-two", &[]).await.expect("join");
    assert!(!ok, "conflicting apply must fail: {out}{err}");
    assert!(err.contains("Apply failed with 1 conflict"), "{err}");
    assert!(err.contains("conflict with \"mgr-one\""), "{err}");
    assert!(err.contains(".data.key"), "{err}");

    let (ok, out, err) = apply(&two, "mgr-two", &["--force-conflicts"])
        .await
        .expect("join");
    assert!(ok, "forced apply: {out}{err}");

    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let cm = serde_json::to_value(api.get("shared").await.expect("get")).expect("json");
    assert_eq!(cm["data"]["key"], "from-two");
    assert_eq!(
        owned(&cm, "mgr-two", "Apply"),
        json!({"f:data": {"f:key": {}}})
    );
    assert!(
        entry(&cm, "mgr-one", "Apply").is_none(),
        "mgr-one lost its only field"
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Upgrading from client-side apply to server-side apply"
/// (`kubectl apply --server-side` takes over what `kubectl apply` managed without conflicts,
/// and keeps the `last-applied-configuration` annotation up to date).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_moves_from_client_side_to_server_side_apply() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl apply test");
        return;
    }
    let server = common::server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let cache = dir.path().join("cache");
    server.write_kubeconfig(&kc).expect("kubeconfig");
    let file = dir.path().join("cm.yaml");
    let manifest = |value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: moved\ndata:\n  key: \"{value}\"\n"
        )
    };
    let run = |args: &[&str]| {
        let (kc, cache) = (kc.clone(), cache.clone());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        tokio::task::spawn_blocking(move || kubectl(&kc, &cache, &args))
    };
    let path = file.to_string_lossy().to_string();
    std::fs::write(&file, manifest("v1")).expect("write");
    let (ok, out, err) = run(&["apply", "-f", &path]).await.expect("join");
    assert!(ok, "client-side apply: {out}{err}");
    std::fs::write(&file, manifest("v2")).expect("write");
    let (ok, out, err) = run(&["apply", "--server-side", "-f", &path])
        .await
        .expect("join");
    assert!(
        ok,
        "server-side apply takes over without conflict: {out}{err}"
    );

    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let cm = serde_json::to_value(api.get("moved").await.expect("get")).expect("json");
    assert_eq!(cm["data"]["key"], "v2");
    assert_eq!(
        owned(&cm, "kubectl", "Apply"),
        json!({"f:data": {"f:key": {}}})
    );
    let last = cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let last: serde_json::Value = serde_json::from_str(&last).expect("annotation is JSON");
    assert_eq!(
        last["data"]["key"], "v2",
        "annotation follows the applied configuration"
    );
    server.shutdown().await;
}
