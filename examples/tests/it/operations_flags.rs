//! `sample-controller --metrics-addr 127.0.0.1:0 --leader-elect`: prints the bound address,
//! leads on the `sample-controller` Lease, serves /metrics (controller-runtime's names),
//! /healthz and /readyz, and releases the lease on Ctrl-C.

use crate::common;

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const DEADLINE: Duration = Duration::from_secs(30);

/// One GET over a fresh connection: the status code and the body.
async fn get(address: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8(response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_addr_and_leader_elect_flags() {
    let home = tempfile::tempdir().unwrap();
    let mut child = common::sample_controller(home.path())
        .args([
            "--embedded",
            "--metrics-addr",
            "127.0.0.1:0",
            "--leader-elect",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut lease = None;
    let address: SocketAddr = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("sample-controller: leader election on lease ") {
                lease = Some(rest.to_owned());
            }
            if let Some(rest) = line.strip_prefix(
                "sample-controller: serving /metrics, /healthz and /readyz on http://",
            ) {
                return rest.parse().unwrap();
            }
        }
        panic!("sample-controller exited before serving metrics");
    })
    .await
    .expect("the bound address within the deadline");
    assert_eq!(lease.as_deref(), Some("default/sample-controller"));
    assert_ne!(address.port(), 0);

    assert_eq!(get(address, "/healthz").await.0, 200);
    // Leading, synced, and example-foo reconciled once.
    let metrics = tokio::time::timeout(DEADLINE, async {
        loop {
            let (status, body) = get(address, "/metrics").await;
            assert_eq!(status, 200);
            let successes = body
                .lines()
                .find_map(|line| {
                    line.strip_prefix(
                        r#"controller_runtime_reconcile_total{controller="sample-controller",result="success"} "#,
                    )
                })
                .and_then(|value| value.parse::<f64>().ok())
                .unwrap_or(0.0);
            if successes >= 1.0 {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a successful reconcile within the deadline");
    assert!(metrics.contains(r#"leader_election_master_status{name="sample-controller"} 1"#));
    assert!(metrics.contains(
        r#"workqueue_adds_total{name="sample-controller",controller="sample-controller"}"#
    ));
    assert_eq!(get(address, "/readyz").await, (200, "ok".to_owned()));

    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
}
