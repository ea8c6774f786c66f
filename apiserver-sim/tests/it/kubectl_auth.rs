//! kubectl's auth commands against the simulator: `auth can-i` (a SelfSubjectAccessReview)
//! and `create token` (a TokenRequest), which kubectl sends in protobuf. Skipped (with a
//! notice) when `kubectl` is not installed.

use crate::common;
use crate::common::kubectl::Kubectl;

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_and_create_token_are_decoded_from_protobuf() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl auth test");
        return;
    }
    let server = common::server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let session = Kubectl::for_server(&server, dir.path());

    let (ok, out) = session
        .run(&["auth", "can-i", "create", "deployments"])
        .await;
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "yes");
    let (ok, out) = session
        .run(&[
            "auth",
            "can-i",
            "get",
            "pods",
            "--subresource=log",
            "--all-namespaces",
        ])
        .await;
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "yes");

    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "bot"}})).unwrap();
    Api::<ServiceAccount>::namespaced(server.client().unwrap(), "default")
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let (ok, token) = session.run(&["create", "token", "bot"]).await;
    assert!(ok, "{token}");
    let token = token.trim();
    assert!(
        !token.is_empty() && !token.contains(char::is_whitespace),
        "{token}"
    );
    server.shutdown().await;
}
