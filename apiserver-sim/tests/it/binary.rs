//! The standalone binary serves and writes a kubeconfig that kube accepts.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

#[tokio::test]
async fn binary_serves_and_writes_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_apiserver-sim"))
        .args(["--port", "0", "--kubeconfig"])
        .arg(&kc)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn binary");
    common::eventually_async("kubeconfig written", common::LIMIT, || {
        let ok = std::fs::read_to_string(&kc).is_ok_and(|s| s.ends_with('\n'));
        async move { ok }
    })
    .await;
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kc).expect("read kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("kube accepts the kubeconfig");
    let client = kube::Client::try_from(config).expect("client");
    let nss: Api<Namespace> = Api::all(client);
    let names: Vec<String> =
        tokio::time::timeout(Duration::from_secs(10), nss.list(&ListParams::default()))
            .await
            .expect("in time")
            .expect("list")
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
    let _ = child.kill();
    let _ = child.wait();
    assert!(names.contains(&"default".to_string()), "{names:?}");
}

#[test]
fn help_documents_workloads_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_apiserver-sim"))
        .arg("--help")
        .output()
        .expect("binary runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(help.contains("--workloads"), "{help}");
}

#[test]
fn service_endpoint_flag_is_documented_and_checked() {
    let bin = env!("CARGO_BIN_EXE_apiserver-sim");
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("binary runs");
    assert!(String::from_utf8_lossy(&out.stdout).contains("--service-endpoint"));
    let out = Command::new(bin)
        .args(["--port", "0", "--service-endpoint", "no-equals-sign"])
        .output()
        .expect("binary runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("expected namespace/name[:port]=https://host:port"),
        "{err}"
    );
}
