//! Whose requests reach the server: a client of the proxy without credentials acts with the
//! server configuration's (on a cluster: over TLS, with its CA), and a client's own
//! `Authorization` is forwarded unchanged. Against a server that checks tokens: the simulator
//! in RBAC mode, or the cluster of `KUBE_RT_TEST_KUBECONFIG`.

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ListParams;
use kube::{Api, Client};
use testkit::cluster::{TestCluster, ns};
use testkit::proxy::FaultProxy;

/// The status a list of the test namespace's ConfigMaps by `client` fails with, or `None`.
async fn refusal(client: Client) -> Option<u16> {
    let api: Api<ConfigMap> = Api::namespaced(client, ns());
    match api.list(&ListParams::default()).await {
        Ok(_) => None,
        Err(kube::Error::Api(status)) => Some(status.code),
        Err(other) => panic!("not an API error: {other:?}"),
    }
}

/// The server that checks tokens, kept alive by the test.
enum Server {
    Simulator(ApiServer),
    Cluster(TestCluster),
}

#[tokio::test]
async fn the_proxy_adds_the_servers_credentials_and_forwards_a_clients_own() {
    let (server, upstream) = if testenv::on_existing_cluster() {
        let cluster = TestCluster::start().await.unwrap();
        let config = cluster.config().unwrap();
        assert_eq!(config.cluster_url.scheme_str(), Some("https"));
        (Server::Cluster(cluster), config)
    } else {
        let sim = ApiServer::builder().rbac(true).start().await.unwrap();
        let mut config = kube::Config::new(sim.url().parse().unwrap());
        config.auth_info.token = sim.admin_token().map(|t| t.to_owned().into());
        config.default_namespace = ns().to_owned();
        (Server::Simulator(sim), config)
    };
    // Without credentials the server refuses the list.
    let mut anonymous = upstream.clone();
    anonymous.auth_info = Default::default();
    assert!(matches!(
        refusal(Client::try_from(anonymous).unwrap()).await,
        Some(401 | 403)
    ));

    let proxy = FaultProxy::start(upstream).await.unwrap();
    assert_eq!(refusal(proxy.client().unwrap()).await, None);
    let mut impostor = proxy.config().unwrap();
    impostor.auth_info.token = Some("not-a-token".to_owned().into());
    assert_eq!(
        refusal(Client::try_from(impostor).unwrap()).await,
        Some(401)
    );

    drop(proxy);
    match server {
        Server::Simulator(sim) => sim.shutdown().await,
        Server::Cluster(cluster) => cluster.shutdown().await,
    }
}
