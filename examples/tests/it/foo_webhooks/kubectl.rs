//! `foo-webhooks` with the real `kubectl` on the standalone `apiserver-sim` binary: the binary
//! maps the Service `default/foo-webhooks` to the operator's port (`--service-endpoint`), the
//! operator (`foo-webhooks --kubeconfig … --service default/foo-webhooks`) installs its CRD and
//! webhook configurations, and kubectl sees the validating webhook's denial, the defaulted
//! replicas and each version of the converted CRD. Skipped, with a notice, when kubectl is not
//! installed.

use std::path::Path;
use std::process::Stdio;

use super::example::names::{GROUP, VALIDATING_WEBHOOK};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::common;
use common::kubectl::{
    DEADLINE, kubectl, kubectl_installed, kubectl_until, standalone_apiserver_sim,
};

const BIN: &str = env!("CARGO_BIN_EXE_foo-webhooks");
const SERVICE: &str = "default/foo-webhooks";

fn manifest(name: &str) -> String {
    format!(
        "{}/manifests/foo-webhooks/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A free port of 127.0.0.1 for the operator's webhook server: the simulator must know it
/// before the operator starts, to map the Service to it.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts the operator on `kubeconfig` and waits until it says its webhooks are installed.
async fn start_operator(kubeconfig: &Path, port: u16) -> Child {
    let mut operator = Command::new(BIN)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--webhook-port", &port.to_string(), "--service", SERVICE])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(operator.stdout.take().unwrap()).lines();
    let serving = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("webhooks served on") {
                return;
            }
        }
        panic!("foo-webhooks exited before serving its webhooks");
    };
    tokio::time::timeout(DEADLINE, serving)
        .await
        .expect("foo-webhooks serves its webhooks in time");
    operator
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_denials_defaults_and_every_version() {
    if !kubectl_installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the foo-webhooks kubectl test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, cache) = (dir.path().join("kubeconfig"), dir.path().join("kube-cache"));
    let port = free_port();
    let mut server = Command::new(standalone_apiserver_sim())
        .args(["--port", "0", "--workloads=200", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg(format!(
            "--service-endpoint={SERVICE}=https://127.0.0.1:{port}"
        ))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The binary writes the kubeconfig once it serves.
    kubectl_until(&kubeconfig, &cache, &["get", "namespaces"], |out| {
        out.contains("default")
    })
    .await;
    let mut operator = start_operator(&kubeconfig, port).await;

    // The validating webhook's denial, as kubectl prints it.
    let invalid = manifest("invalid-foo.yaml");
    let denial = kubectl(&kubeconfig, &cache, &["apply", "-f", &invalid])
        .await
        .expect_err("the invalid Foo is refused");
    let expected = format!(
        "admission webhook \"{VALIDATING_WEBHOOK}\" denied the request: \
         spec.deployment.replicas: Invalid value: 20: must be between 1 and 10"
    );
    assert!(denial.contains(&expected), "{denial}");

    // A Foo written as v1alpha1 without replicas comes back with them, in both versions.
    let example = manifest("example-foo.yaml");
    let applied = kubectl(&kubeconfig, &cache, &["apply", "-f", &example])
        .await
        .unwrap();
    assert!(applied.contains("example-foo"), "{applied}");
    let alpha = format!("foos.v1alpha1.{GROUP}");
    let hub = format!("foos.v1.{GROUP}");
    let get = |resource: &str, path: &str| {
        let args = [
            "get".to_owned(),
            resource.to_owned(),
            "example-foo".to_owned(),
            "-o".to_owned(),
            format!("jsonpath={{{path}}}"),
        ];
        let (kubeconfig, cache) = (kubeconfig.clone(), cache.clone());
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            kubectl(&kubeconfig, &cache, &args).await.unwrap()
        }
    };
    assert_eq!(get(&alpha, ".spec.replicas").await, "1");
    assert_eq!(get(&hub, ".spec.deployment.replicas").await, "1");
    assert_eq!(get(&hub, ".spec.deployment.name").await, "example-foo");

    // Each version of the converted CRD reads as that version, one object or a list.
    for (resource, version) in [(&alpha, "v1alpha1"), (&hub, "v1")] {
        let api_version = format!("{GROUP}/{version}");
        assert_eq!(get(resource, ".apiVersion").await, api_version);
        let listed = kubectl(
            &kubeconfig,
            &cache,
            &["get", resource, "-o", "jsonpath={.items[*].apiVersion}"],
        )
        .await
        .unwrap();
        assert_eq!(listed, api_version);
    }

    // The operator keeps the Deployment; the workload simulator makes its replica available,
    // and the status shows it in either version.
    kubectl_until(
        &kubeconfig,
        &cache,
        &[
            "get",
            &alpha,
            "example-foo",
            "-o",
            "jsonpath={.status.availableReplicas}",
        ],
        |out| out == "1",
    )
    .await;

    common::interrupt_and_expect_clean_exit(&mut operator, DEADLINE).await;
    common::interrupt_and_expect_clean_exit(&mut server, DEADLINE).await;
}
