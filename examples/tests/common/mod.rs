//! Helpers shared by the integration tests that run processes: signals to child processes, and
//! (`kubectl`) running kubectl against the standalone simulator binary. Tests in this process
//! use the public test environment (`testenv`).

#![allow(dead_code)]

use std::time::Duration;

pub mod kubectl;

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
