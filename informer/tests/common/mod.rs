//! Helpers shared by the informer's integration tests: config maps on the simulator, a recording
//! handler, a running informer, and polling with a deadline.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use indexer::compact::{Codec, CodecOptions, Compact};
use informer::{ApiListerWatcher, FifoKind, Object, SharedIndexInformer};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Resource};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use testkit::cluster::{Server, TestCluster, ns};
pub use testkit::config_maps::{
    NS, OWN_SELECTOR, State, is_own, name, own_cm, put, remove, rv, server_state, state_of,
};
pub use testkit::{Event, Recorder, eventually};

mod both_fifos;
mod both_storages;
pub(crate) use both_fifos::on_both_fifos;
pub(crate) use both_storages::on_both_fifos_and_compact;

/// The ConfigMaps an informer test runs on: typed, or compact (`Compact<ConfigMap>`, kept by a
/// codec that trains its dictionary on the first few objects, so both stored forms occur).
pub trait TestObject: Object + Resource<DynamicType = (), Scope = NamespaceResourceScope> {
    /// Sets what an informer of this type needs before it runs (a compact one: its codec).
    fn prepare(informer: &SharedIndexInformer<Self>);
}

impl TestObject for ConfigMap {
    fn prepare(_: &SharedIndexInformer<Self>) {}
}

impl TestObject for Compact<ConfigMap> {
    fn prepare(informer: &SharedIndexInformer<Self>) {
        let codec = Codec::new(CodecOptions::new().dictionary(8, 4 * 1024));
        informer.set_transform(codec.transform()).unwrap();
    }
}

/// A resourceVersion as a number, to compare versions (a real server's own bookmarks move an
/// informer's past the versions a test knows of).
pub fn version(resource_version: &str) -> u64 {
    resource_version.parse().unwrap()
}

/// The [`State`] of an informer's cache.
pub fn cache_state<O: Object>(informer: &SharedIndexInformer<O>) -> State {
    state_of(informer.indexer().list().iter().map(|obj| &**obj))
}

/// An informer over the test's own config maps in the test namespace (those labelled
/// `kube-rt.dev/test-object`, as [`TestCluster::put_own`] makes them: a whole cluster puts ConfigMaps of its
/// own in every namespace), on the fifo of `kind`, as objects of type `O` (typed or compact).
pub fn config_map_informer<O: TestObject>(
    server: &impl Server,
    resync: Duration,
    kind: FifoKind,
) -> Arc<SharedIndexInformer<O>> {
    let api: Api<O> = Api::namespaced(server.test_client().unwrap(), ns());
    let own = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    let informer = SharedIndexInformer::builder(Arc::new(own))
        .resync_period(resync)
        .fifo(kind)
        .build();
    O::prepare(&informer);
    Arc::new(informer)
}

/// A running informer task.
pub struct Running {
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

pub fn spawn<O: Object>(informer: &Arc<SharedIndexInformer<O>>) -> Running {
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
