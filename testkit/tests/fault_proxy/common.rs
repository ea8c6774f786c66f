//! Helpers of the proxy's tests: a proxy in front of the test's server, clients of it, and raw
//! requests that show what the client received byte for byte.

use std::time::Duration;

use futures::StreamExt;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::WatchParams;
use kube::core::WatchEvent;
use kube::{Api, Client};
use testkit::cluster::{TestCluster, ns};
use testkit::fault::{Effect, Fault, InjectFaults};
use testkit::proxy::FaultProxy;

/// The test's server (a fresh simulator, or the cluster of `KUBE_RT_TEST_KUBECONFIG`) and a
/// proxy in front of it.
pub async fn proxied() -> (TestCluster, FaultProxy) {
    let cluster = TestCluster::start().await.unwrap();
    let proxy = FaultProxy::start(cluster.config().unwrap()).await.unwrap();
    (cluster, proxy)
}

/// A client of the proxy without kube's retry of 429, 503 and 504, so the test sees them.
pub fn without_retry(proxy: &FaultProxy) -> Client {
    let mut config = proxy.config().unwrap();
    config.default_retry = false;
    Client::try_from(config).unwrap()
}

/// ConfigMaps of the test namespace through `client`.
pub fn config_maps(client: Client) -> Api<ConfigMap> {
    Api::namespaced(client, ns())
}

/// The path of the test namespace's ConfigMaps, with `query`.
pub fn config_maps_path(query: &str) -> String {
    format!("/api/v1/namespaces/{}/configmaps?{query}", ns())
}

/// What a raw GET received.
#[derive(Debug)]
pub struct Raw {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// Every body byte received.
    pub body: Vec<u8>,
    /// The error that broke the body, if it did not end cleanly.
    pub broken: Option<String>,
}

/// GETs `path` and reads the answer to its end or its break.
pub async fn raw_get(client: &Client, path: &str) -> Raw {
    let request = Request::get(path)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = client.send(request).await.unwrap();
    let (parts, mut body) = response.into_parts();
    let mut bytes = Vec::new();
    let mut broken = None;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
            Err(error) => {
                broken = Some(error.to_string());
                break;
            }
        }
    }
    Raw {
        status: parts.status,
        headers: parts.headers,
        body: bytes,
        broken,
    }
}

/// The name of the object of a watch event line.
pub fn event_name(line: &[u8]) -> String {
    let event: serde_json::Value = serde_json::from_slice(line).unwrap();
    event["object"]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The resourceVersion of a list of the test namespace's ConfigMaps.
pub async fn list_version(api: &Api<ConfigMap>) -> String {
    api.list(&Default::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap()
}

/// A watch of `api` from `rv`.
pub async fn watch_from(
    api: &Api<ConfigMap>,
    rv: &str,
) -> futures::stream::BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>> {
    api.watch(&WatchParams::default(), rv)
        .await
        .unwrap()
        .boxed()
}

/// Installs `effect` for the next `verb` request on ConfigMaps.
pub fn once(faults: &impl InjectFaults, verb: &str, effect: Effect) {
    faults
        .inject(Fault::next(verb, "configmaps", 1, effect))
        .unwrap();
}

/// Waits until `faults` counts `n` open watches.
pub async fn open_watches(faults: &impl InjectFaults, n: usize) {
    testkit::eventually(
        &format!("{n} open watches"),
        Duration::from_secs(20),
        || faults.open_watches() == n,
    )
    .await;
}
