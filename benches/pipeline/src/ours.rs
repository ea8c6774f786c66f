//! Our stack as a [`Peer`]: a `SharedIndexInformer<Pod>` (reflector → delta fifo → indexer).

use std::sync::Arc;

use anyhow::Result;
use informer::{ReflectorOptions, SharedIndexInformer, strip_managed_fields};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};

/// A running informer and its task.
#[derive(Debug)]
pub struct Ours {
    /// The informer.
    pub informer: Arc<SharedIndexInformer<Pod>>,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl Ours {
    /// Builds the informer for these options without starting it.
    pub fn informer(
        client: kube::Client,
        options: &RunOptions,
    ) -> Result<Arc<SharedIndexInformer<Pod>>> {
        let informer = SharedIndexInformer::for_api(Api::<Pod>::all(client))
            .reflector_options(reflector_options(options))
            .build();
        if options.strip_managed_fields {
            informer.set_transform(strip_managed_fields)?;
        }
        Ok(Arc::new(informer))
    }

    /// Starts a built informer on the runtime.
    pub fn run(informer: Arc<SharedIndexInformer<Pod>>) -> Self {
        let shutdown = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, shutdown) = (Arc::clone(&informer), shutdown.clone());
            async move { informer.run(shutdown).await }
        });
        Self {
            informer,
            shutdown,
            task,
        }
    }
}

/// The reflector options of a run (streaming list, page size).
pub fn reflector_options(options: &RunOptions) -> ReflectorOptions {
    let reflector = ReflectorOptions::default().streaming_list(options.stream);
    match options.page_size {
        Some(page_size) => reflector.page_size(page_size),
        None => reflector,
    }
}

impl Peer for Ours {
    const NAME: &'static str = "ours";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.per_namespace,
            "the full informer peer watches cluster-wide only"
        );
        Ok(Self::run(Self::informer(client, options)?))
    }

    async fn synced(&self) {
        self.informer.synced().await;
    }

    fn resource_version(&self, marker: &Marker) -> Result<Option<String>> {
        let key = informer::ObjectKey::namespaced(&marker.namespace, &marker.name)?;
        Ok(self
            .informer
            .indexer()
            .get_by_key(&key)
            .and_then(|pod| pod.metadata.resource_version.clone()))
    }

    fn len(&self) -> usize {
        self.informer.cache_size()
    }

    async fn stop(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }
}
