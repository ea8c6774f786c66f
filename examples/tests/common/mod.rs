//! Helpers shared by the integration tests: signals to child processes, (`kubectl`) running
//! kubectl against the standalone simulator binary, and (`workloads`) the test environment of
//! tests that follow a Foo's workload to its Pods and its garbage collection. Tests in this process use
//! the public test environment (`testenv`).

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

pub mod kubectl;
pub mod workloads;

/// Sends `signal` (`INT`, `TERM`, ...) to a child process.
pub async fn signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("the child is running").to_string();
    let sent = tokio::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .await
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} {pid} failed");
}

/// Interrupts a child process as Ctrl-C would and checks that it exits successfully within
/// `deadline`.
pub async fn interrupt_and_expect_clean_exit(
    child: &mut tokio::process::Child,
    deadline: Duration,
) {
    signal(child, "INT").await;
    let status = tokio::time::timeout(deadline, child.wait())
        .await
        .expect("the child exits within the deadline")
        .expect("waiting for the child");
    assert!(status.success(), "{status}");
}

/// The `sample-controller` binary as the tests run it: `HOME` set to `home` (so no
/// `~/.kube/config` is found), no `KUBECONFIG`, no in-cluster environment, default logging,
/// killed when dropped. The caller adds arguments and pipes.
pub fn sample_controller(home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_sample-controller"));
    command
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("RUST_LOG")
        .kill_on_drop(true);
    command
}
