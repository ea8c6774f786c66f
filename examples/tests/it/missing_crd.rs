//! `sample-controller` against a cluster without the Foo CRD: it says which kind is not served
//! and how to fix it (instead of retrying a parse error forever), and with `--install-crd` it
//! installs the CRD itself and runs.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use apiserver_sim::ApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::PostParams;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdout};

use crate::sample_controller::foo::{Foo, new_foo};

/// The acceptance bound: the missing kind is named within this long.
const DEADLINE: Duration = Duration::from_secs(30);

/// A simulator without the CRD and its kubeconfig, written in `dir`.
async fn server_without_crd(dir: &std::path::Path) -> (ApiServer, std::path::PathBuf) {
    let server = ApiServer::start().await.unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    (server, kubeconfig)
}

/// `sample-controller --kubeconfig <kubeconfig> <args>`, its stdout and stderr read by line.
fn spawn(
    kubeconfig: &std::path::Path,
    home: &std::path::Path,
    args: &[&str],
) -> (
    Child,
    Lines<BufReader<ChildStdout>>,
    Lines<BufReader<ChildStderr>>,
) {
    let mut child = common::sample_controller(home)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    (child, stdout, stderr)
}

/// The first line of `lines` that satisfies `wanted`, within [`DEADLINE`].
async fn line_with<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut Lines<R>,
    what: &str,
    wanted: impl Fn(&str) -> bool,
) -> String {
    let found = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if wanted(&line) {
                return line;
            }
        }
        panic!("sample-controller exited before printing {what}");
    });
    found
        .await
        .unwrap_or_else(|_| panic!("{what} within {DEADLINE:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_crd_the_missing_kind_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (server, kubeconfig) = server_without_crd(dir.path()).await;
    let (mut child, _stdout, mut stderr) = spawn(&kubeconfig, dir.path(), &[]);
    let line = line_with(&mut stderr, "the kind that is not served", |line| {
        line.contains("foos.samplecontroller.k8s.io")
    })
    .await;
    assert!(
        line.contains("does not serve") && line.contains("CustomResourceDefinition installed"),
        "the message says what is missing and what to do: {line}"
    );
    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_crd_installs_the_crd_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (server, kubeconfig) = server_without_crd(dir.path()).await;
    let (mut child, mut stdout, _stderr) = spawn(&kubeconfig, dir.path(), &["--install-crd"]);
    line_with(&mut stdout, "the installed CRD", |line| {
        line == "sample-controller: CRD foos.samplecontroller.k8s.io installed and established"
    })
    .await;
    let client = server.client().unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    assert!(
        crds.get_opt("foos.samplecontroller.k8s.io")
            .await
            .unwrap()
            .is_some(),
        "the CRD is stored"
    );
    Api::<Foo>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &new_foo("installed", "installed-nginx", Some(1)),
        )
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client, "default");
    testkit::eventually_async("the Foo's Deployment", DEADLINE, || async {
        deployments
            .get_opt("installed-nginx")
            .await
            .is_ok_and(|d| d.is_some())
    })
    .await;
    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
    server.shutdown().await;
}
