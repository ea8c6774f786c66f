//! The peer: kube-runtime's `watcher` feeding a `reflector` store, on the same server and bytes.

use anyhow::Result;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};

/// A reflector store and the task driving its watcher.
#[derive(Debug)]
pub struct KubeRuntime {
    store: Store<Pod>,
    task: JoinHandle<()>,
}

impl Peer for KubeRuntime {
    const NAME: &'static str = "kube-runtime";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.per_namespace,
            "the full kube-runtime peer watches cluster-wide only"
        );
        anyhow::ensure!(
            !options.compact_objects,
            "compact objects are ours only (kube-runtime's store always keeps clones)"
        );
        let mut config = watcher::Config::default().page_size(options.page_size.unwrap_or(500));
        if options.stream {
            config = config.streaming_lists();
        }
        let (store, writer) = reflector::store();
        let events = watcher(Api::<Pod>::all(client), config);
        let events = if options.strip_managed_fields {
            events
                .modify(|pod| pod.metadata.managed_fields = None)
                .boxed()
        } else {
            events.boxed()
        };
        let task = tokio::spawn(reflector::reflector(writer, events).for_each(|_| async {}));
        Ok(Self { store, task })
    }

    async fn synced(&self) {
        // Only fails if the writer is dropped, which ends the run anyway.
        let _ = self.store.wait_until_ready().await;
    }

    fn resource_version(&self, marker: &Marker) -> Result<Option<String>> {
        let key = ObjectRef::new(&marker.name).within(&marker.namespace);
        Ok(self
            .store
            .get(&key)
            .and_then(|pod| pod.metadata.resource_version.clone()))
    }

    fn len(&self) -> usize {
        self.store.len()
    }

    async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}
