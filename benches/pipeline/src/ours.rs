//! Our stack as a [`Peer`]: a `SharedIndexInformer<Pod>` (reflector → fifo → indexer).

use std::sync::Arc;

use anyhow::Result;
use informer::{
    InformerBuilder, Object, ReflectorOptions, SharedIndexInformer, strip_managed_fields,
};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::ResourceExt;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};
use crate::readers::ListCache;

/// A running informer of `K` and its task: our peers, of whole Pods ([`Ours`]) and of a lean
/// projection (`lean::OursLean`).
#[derive(Debug)]
pub struct RunningInformer<K: Clone + 'static> {
    /// The informer.
    pub informer: Arc<SharedIndexInformer<K>>,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

/// Our informer of whole Pods.
pub type Ours = RunningInformer<Pod>;

impl<K: Object> RunningInformer<K> {
    /// Starts a built informer on the runtime.
    pub fn run(informer: Arc<SharedIndexInformer<K>>) -> Self {
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

    /// The cached resourceVersion of the marker pod.
    pub fn marker_version(&self, marker: &Marker) -> Result<Option<String>> {
        let key = informer::ObjectKey::namespaced(&marker.namespace, &marker.name)?;
        Ok(self
            .informer
            .indexer()
            .get_by_key(&key)
            .and_then(|object| object.resource_version()))
    }

    /// Stops the informer and waits for its task.
    pub async fn shut_down(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }
}

impl Ours {
    /// Builds the informer for these options without starting it.
    pub fn informer(
        client: kube::Client,
        options: &RunOptions,
    ) -> Result<Arc<SharedIndexInformer<Pod>>> {
        let informer = informer_builder(Api::<Pod>::all(client), options).build();
        if options.strip_managed_fields {
            informer.set_transform(strip_managed_fields)?;
        }
        Ok(Arc::new(informer))
    }
}

/// An informer over `api` with a run's reflector options, fifo and pop batch.
pub fn informer_builder<K: Object>(api: Api<K>, options: &RunOptions) -> InformerBuilder<K> {
    let mut builder =
        SharedIndexInformer::for_api(api).reflector_options(reflector_options(options));
    if let Some(fifo) = options.fifo {
        builder = builder.fifo(fifo.kind());
    }
    if let Some(max_items) = options.pop_batch {
        builder = builder.pop_batch(max_items);
    }
    builder
}

/// The reflector options of a run (streaming list, page size).
pub fn reflector_options(options: &RunOptions) -> ReflectorOptions {
    let reflector = ReflectorOptions::default()
        .streaming_list(options.stream)
        .compact_objects(options.compact_objects);
    match options.page_size {
        Some(page_size) => reflector.page_size(page_size),
        None => reflector,
    }
}

/// The [`Peer`] methods of a [`RunningInformer`] of pods, whatever its object type: synced, the
/// marker's version, the cache's size, stop, and its lister for readers.
macro_rules! running_informer_peer {
    () => {
        async fn synced(&self) {
            self.informer.synced().await;
        }

        fn resource_version(&self, marker: &Marker) -> Result<Option<String>> {
            self.marker_version(marker)
        }

        fn len(&self) -> usize {
            self.informer.cache_size()
        }

        async fn stop(self) {
            self.shut_down().await;
        }

        fn lister(&self) -> Option<ListCache> {
            let informer = Arc::clone(&self.informer);
            Some(Arc::new(move || informer.indexer().list().len()))
        }
    };
}
pub(crate) use running_informer_peer;

impl Peer for Ours {
    const NAME: &'static str = "ours";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.per_namespace,
            "the full informer peer watches cluster-wide only"
        );
        Ok(Self::run(Self::informer(client, options)?))
    }

    running_informer_peer!();
}
