//! One fault test, one source: the same scenario against the simulator's own fault injection
//! and against the proxy in front of the test's server (the simulator, or a cluster).

use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, PostParams};
use kube::core::WatchEvent;
use kube::{Api, Client};
use testkit::config_maps::cm;
use testkit::fault::{Effect, Fault, FaultError, InjectFaults};

use crate::common::*;

/// Failure rules, dropped watches, compaction and the request record, through `client`.
async fn scenario(faults: &impl InjectFaults, client: Client) {
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    faults.reset_request_counts();
    faults
        .inject(FailRule::new("list", "configmaps", 500, 1))
        .unwrap();
    let Err(kube::Error::Api(status)) = api.list(&ListParams::default()).await else {
        panic!("the list was served");
    };
    assert_eq!(status.code, 500);
    let rv = list_version(&api).await;

    // An in-band 410, then a watch dropped by the server.
    faults
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    let mut events = watch_from(&api, &rv).await;
    assert!(matches!(events.next().await, Some(Ok(WatchEvent::Error(s))) if s.code == 410));
    let mut events = watch_from(&api, &rv).await;
    open_watches(faults, 1).await;
    faults.drop_watches();
    assert!(events.next().await.is_none());

    // Compaction: the version listed before is gone.
    let mut after = cm("after", "1");
    // In the client's namespace (the simulator's own client's is `default`).
    after.metadata.namespace = None;
    api.create(&PostParams::default(), &after).await.unwrap();
    faults.compact().await.unwrap();
    let mut events = watch_from(&api, &rv).await;
    assert!(matches!(events.next().await, Some(Ok(WatchEvent::Error(s))) if s.code == 410));

    assert_eq!(faults.request_count("list", "configmaps"), 2);
    assert_eq!(faults.request_count("watch", "configmaps"), 3);
    assert_eq!(faults.request_count("create", "configmaps"), 1);
    faults.clear_faults();
}

#[tokio::test]
async fn one_fault_scenario_runs_on_the_simulator_and_behind_the_proxy() {
    let sim = ApiServer::start().await.unwrap();
    scenario(&sim, sim.client().unwrap()).await;
    sim.shutdown().await;

    let (cluster, proxy) = proxied().await;
    scenario(&proxy, proxy.client().unwrap()).await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn the_simulator_refuses_the_wire_faults_only_the_proxy_has() {
    let sim = ApiServer::start().await.unwrap();
    let stall = Fault::next(
        "list",
        "configmaps",
        1,
        Effect::Stall(Duration::from_secs(1)),
    );
    assert!(matches!(
        sim.inject(stall),
        Err(FaultError::Unsupported {
            effect: "stalled answer",
            ..
        })
    ));
    let invalid = FailRule::random("list", "configmaps", 500, 2.0, 1);
    assert!(matches!(sim.inject(invalid), Err(FaultError::Invalid(_))));
    sim.shutdown().await;
}
