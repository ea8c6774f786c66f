//! The README's command for this example: `foo-webhooks` with no cluster configured starts the
//! embedded server, serves and installs its webhooks, creates `example-foo` without replicas
//! and reports them defaulted, and stops cleanly on Ctrl-C.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

use crate::common;
use common::kubectl::DEADLINE;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_mode_defaults_example_foo_and_shuts_down_on_sigint() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_foo-webhooks"))
        .env("HOME", home.path())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();

    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let defaulted = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            let done = line.contains("kubectl get");
            printed.push(line);
            if done {
                return;
            }
        }
        panic!("foo-webhooks exited early, after printing {printed:?}");
    });
    defaulted
        .await
        .expect("foo-webhooks started within the deadline");
    assert_eq!(
        printed[0],
        "foo-webhooks: no cluster configured, using an embedded apiserver-sim"
    );
    assert!(
        printed[1].starts_with("foo-webhooks: webhooks served on https://127.0.0.1:"),
        "{printed:?}"
    );
    assert_eq!(
        printed[2],
        "foo-webhooks: created example-foo as webhooks.kube-rt.dev/v1alpha1 without replicas; \
         defaulted to spec.replicas=1"
    );

    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
}
