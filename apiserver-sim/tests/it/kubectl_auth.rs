//! kubectl's auth commands against the simulator: `auth can-i` (a SelfSubjectAccessReview)
//! and `create token` (a TokenRequest), which kubectl sends in protobuf. Skipped (with a
//! notice) when `kubectl` is not installed.

use crate::common;

use std::path::Path;

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use serde_json::json;

/// Runs kubectl against `kubeconfig` off the runtime's threads.
async fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> (bool, String) {
    let (kubeconfig, cache) = (kubeconfig.to_path_buf(), cache.to_path_buf());
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = testkit::kubectl::run(&kubeconfig, &cache, &args);
        (out.success, out.text())
    })
    .await
    .expect("kubectl ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_and_create_token_are_decoded_from_protobuf() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl auth test");
        return;
    }
    let server = common::server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let cache = dir.path().join("cache");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");

    let (ok, out) = kubectl(
        &kubeconfig,
        &cache,
        &["auth", "can-i", "create", "deployments"],
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "yes");
    let (ok, out) = kubectl(
        &kubeconfig,
        &cache,
        &[
            "auth",
            "can-i",
            "get",
            "pods",
            "--subresource=log",
            "--all-namespaces",
        ],
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "yes");

    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "bot"}})).unwrap();
    Api::<ServiceAccount>::namespaced(server.client().unwrap(), "default")
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let (ok, token) = kubectl(&kubeconfig, &cache, &["create", "token", "bot"]).await;
    assert!(ok, "{token}");
    let token = token.trim();
    assert!(
        !token.is_empty() && !token.contains(char::is_whitespace),
        "{token}"
    );
    server.shutdown().await;
}
