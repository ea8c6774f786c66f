//! Simulator instances: several in one process, each on its own port, a given port bound (and
//! refused while taken), serving stopped on drop and on shutdown.

use crate::common;

use std::time::Duration;

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

/// Waits until nothing accepts connections on `addr` any more.
async fn stops_serving(addr: std::net::SocketAddr) {
    common::eventually_async("the server to stop serving", common::LIMIT, || async move {
        tokio::net::TcpStream::connect(addr).await.is_err()
    })
    .await
}

#[tokio::test]
async fn many_servers_in_one_process() {
    let a = ApiServer::start().await.expect("a");
    let b = ApiServer::start().await.expect("b");
    assert_ne!(a.addr(), b.addr());
    let cms: Api<ConfigMap> = Api::default_namespaced(a.client().expect("client"));
    crate::list_watch::make_cm(&cms, "only-in-a", &[]).await;
    assert_eq!(a.objects("", "configmaps").len(), 1);
    assert!(b.objects("", "configmaps").is_empty());
    let a_addr = a.addr();
    drop(a);
    stops_serving(a_addr).await;
    let still: Api<ConfigMap> = Api::default_namespaced(b.client().expect("client"));
    assert!(
        still
            .list(&ListParams::default())
            .await
            .expect("b serves")
            .items
            .is_empty()
    );
    let b_addr = b.addr();
    b.shutdown().await;
    stops_serving(b_addr).await;
}

#[tokio::test]
async fn binds_a_given_port() {
    // Ask the OS for a free port, release it, and start there (retry if another process
    // took it in between).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let (server, port) = loop {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("probe");
        let port = probe.local_addr().expect("addr").port();
        drop(probe);
        match ApiServer::builder().port(port).start().await {
            Ok(s) => break (s, port),
            Err(e) => assert!(tokio::time::Instant::now() < deadline, "{e}"),
        }
    };
    assert_eq!(server.addr().port(), port);
    assert!(server.addr().ip().is_loopback());
    assert_eq!(server.url(), format!("http://127.0.0.1:{port}"));
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    crate::list_watch::make_cm(&cms, "x", &[]).await;
    // The port is taken while the server runs.
    let err = ApiServer::builder()
        .port(port)
        .start()
        .await
        .expect_err("port in use");
    assert!(matches!(err, apiserver_sim::Error::Bind { .. }), "{err}");
}
