use crate::common;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};

#[tokio::test]
async fn configmap_round_trip() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    assert!(created.metadata.uid.is_some());
    let got = cms.get("a").await.expect("get");
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );
    let list = cms.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    let r = common::raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps?",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    server.shutdown().await;
}

/// A server shut down before its tasks ever ran (no request made, nothing awaited in between)
/// still stops: every task sees the shutdown even when it subscribes after it was sent.
#[tokio::test]
async fn shutdown_right_after_start_returns() {
    for _ in 0..10 {
        let server = apiserver_sim::ApiServer::builder()
            .workload_simulator(std::time::Duration::from_millis(10))
            .start()
            .await
            .expect("start");
        tokio::time::timeout(std::time::Duration::from_secs(20), server.shutdown())
            .await
            .expect("shutdown returns");
    }
}
