//! kubectl against webhooks (Kubernetes docs, "Dynamic Admission Control"; kubectl prints a
//! server's `Warning` headers and a denial's message). Skipped (with a notice) when
//! `kubectl` is not installed.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use super::configure;
use super::harness::{Reply, WebhookServer, admit, configuration, deny, rules, webhook};
use crate::common;

fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> (bool, String) {
    let out = testkit::kubectl::run(kubeconfig, cache, args);
    (out.success, out.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_denials_and_warnings() {
    let available = Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !available {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl webhook test");
        return;
    }
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(if r["request"]["name"] == "reserved" {
            deny(
                r,
                json!({"code": 403, "reason": "Forbidden", "message": "the name is reserved"}),
            )
        } else {
            admit(r, json!({"warnings": ["configmaps here are audited"]}))
        })
    })
    .await;
    let server = common::server().await;
    let w = webhook(
        "names.example.com",
        hook.client_config("/names"),
        rules("configmaps"),
    );
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "names", vec![w]),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let cache = dir.path().join("cache");
    server.write_kubeconfig(&kc).expect("kubeconfig");
    let run = |args: &'static [&'static str]| {
        let (kc, cache) = (kc.clone(), cache.clone());
        tokio::task::spawn_blocking(move || kubectl(&kc, &cache, args))
    };
    let (ok, out) = run(&["create", "configmap", "fine", "--from-literal=a=b"])
        .await
        .expect("kubectl");
    assert!(ok, "{out}");
    assert!(
        out.contains("Warning: configmaps here are audited"),
        "{out}"
    );
    let (ok, out) = run(&["create", "configmap", "reserved"])
        .await
        .expect("kubectl");
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "failed to create configmap: admission webhook \"names.example.com\" denied the request: the name is reserved"
        ),
        "{out}"
    );
}
