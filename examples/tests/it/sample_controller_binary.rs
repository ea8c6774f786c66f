//! The README's first command: `sample-controller` with no cluster configured starts the
//! embedded server (a playground that runs workloads: `example-foo`'s Deployment gets a
//! Ready pod), syncs `example-foo`, and stops cleanly on Ctrl-C.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use tokio::io::{AsyncBufReadExt, BufReader};

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_mode_syncs_example_foo_and_shuts_down_on_sigint() {
    let home = tempfile::tempdir().unwrap();
    let mut child = common::sample_controller(home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    assert_eq!(
        first,
        "sample-controller: no cluster configured, using an embedded apiserver-sim"
    );

    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let synced = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("Foo synced successfully") && line.contains("default/example-foo") {
                return;
            }
        }
        panic!("sample-controller exited before syncing example-foo");
    });
    synced
        .await
        .expect("example-foo synced within the deadline");

    // The playground runs the Deployment: a pod of example-foo becomes Ready.
    let written = stdout.next_line().await.unwrap().unwrap();
    let path = written
        .strip_prefix("sample-controller: kubeconfig written to ")
        .unwrap_or_else(|| panic!("the kubeconfig line: {written}"));
    let kubeconfig = kube::config::Kubeconfig::read_from(path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(kube::Client::try_from(config).unwrap());
    testkit::eventually_async("a Ready pod of example-foo", DEADLINE, || async {
        let list = pods.list(&ListParams::default()).await.unwrap();
        list.items.iter().any(|pod| {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            let ready = pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
            name.starts_with("example-foo-") && ready
        })
    })
    .await;

    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
}
