//! kubectl's auth commands against the simulator: `auth can-i` (a SelfSubjectAccessReview),
//! `auth can-i --list` (a SelfSubjectRulesReview) and `create token` (a TokenRequest), which
//! kubectl sends in protobuf. Skipped (with a notice) when `kubectl` is not installed.

use crate::common::kubectl;

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_and_create_token_are_decoded_from_protobuf() {
    let Some((server, _dir, session)) =
        kubectl::start("the kubectl auth test", ApiServer::builder()).await
    else {
        return;
    };

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

/// `auth can-i --list` (a SelfSubjectRulesReview, in protobuf): with RBAC off, everything.
/// (With RBAC on, kubectl would send no credentials to a plain-HTTP server; the rules of
/// RBAC users are checked with `kube` clients in `rbac.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_list_is_decoded_from_protobuf() {
    let Some((server, _dir, session)) =
        kubectl::start("the kubectl auth test", ApiServer::builder()).await
    else {
        return;
    };
    let out = session.ok(&["auth", "can-i", "--list"]).await;
    let everything = |prefix: &str| {
        out.lines()
            .any(|line| line.starts_with(prefix) && line.trim_end().ends_with("[*]"))
    };
    assert!(everything("*.* "), "{out}");
    assert!(everything("  "), "the non-resource URLs in {out}");
    server.shutdown().await;
}
