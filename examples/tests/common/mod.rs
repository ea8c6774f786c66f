//! Helpers shared by the integration tests: a simulator with the Foo CRD, and polling with a
//! deadline instead of fixed sleeps.

#![allow(dead_code)]

use std::time::Duration;

use apiserver_sim::ApiServer;
use examples::cluster::install_crd;
use examples::foo::crd;
pub use testkit::eventually_some;

/// How long a condition may take before a test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A simulator with the Foo CRD established.
pub async fn server_with_crd() -> ApiServer {
    let server = ApiServer::start().await.unwrap();
    install_crd(&server.client().unwrap(), &crd())
        .await
        .unwrap();
    server
}

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
