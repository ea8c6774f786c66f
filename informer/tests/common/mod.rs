//! Helpers shared by the informer's integration tests: config maps on the simulator, a recording
//! handler, a running informer, and polling with a deadline.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use informer::{ApiListerWatcher, FifoKind, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use testkit::cluster::{Server, TestCluster, ns};
pub use testkit::config_maps::{
    NS, OWN_SELECTOR, State, is_own, name, own_cm, put, remove, rv, server_state, state_of,
};
pub use testkit::{Event, Recorder, eventually};

mod both_fifos;
pub(crate) use both_fifos::on_both_fifos;

/// A resourceVersion as a number, to compare versions (a real server's own bookmarks move an
/// informer's past the versions a test knows of).
pub fn version(resource_version: &str) -> u64 {
    resource_version.parse().unwrap()
}

/// The [`State`] of an informer's cache.
pub fn cache_state(informer: &SharedIndexInformer<ConfigMap>) -> State {
    state_of(informer.indexer().list().iter().map(|obj| &**obj))
}

/// An informer over the test's own config maps in the test namespace (those labelled
/// `kube-rt.dev/test-object`, as [`TestCluster::put_own`] makes them: a whole cluster puts ConfigMaps of its
/// own in every namespace), on the fifo of `kind`.
pub fn config_map_informer(
    server: &impl Server,
    resync: Duration,
    kind: FifoKind,
) -> Arc<SharedIndexInformer<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(server.test_client().unwrap(), ns());
    let own = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    Arc::new(
        SharedIndexInformer::builder(Arc::new(own))
            .resync_period(resync)
            .fifo(kind)
            .build(),
    )
}

/// A running informer task.
pub struct Running {
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

pub fn spawn(informer: &Arc<SharedIndexInformer<ConfigMap>>) -> Running {
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let informer = Arc::clone(informer);
        let shutdown = shutdown.clone();
        async move { informer.run(shutdown).await }
    });
    Running { shutdown, task }
}

impl Running {
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap();
    }
}
