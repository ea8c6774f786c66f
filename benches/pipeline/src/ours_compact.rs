//! Our stack with compact storage as a [`Peer`]: a `SharedIndexInformer<Compact<Pod>>` whose
//! objects are captured from the wire without decoding their bodies and kept encoded by the
//! default codec (zstd with a dictionary trained on the first pods; `managedFields` dropped only
//! in the stripped runs, as the typed peer strips them).

use std::sync::Arc;

use anyhow::Result;
use indexer::compact::{Codec, CodecOptions, Compact};
use informer::SharedIndexInformer;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};
use crate::ours::{RunningInformer, reflector_options};
use crate::readers::ListCache;

/// Our informer of compact Pods.
pub type OursCompact = RunningInformer<Compact<Pod>>;

impl Peer for OursCompact {
    const NAME: &'static str = "ours-compact";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.per_namespace,
            "the compact informer peer watches cluster-wide only"
        );
        let mut builder = SharedIndexInformer::for_api(Api::<Compact<Pod>>::all(client))
            .reflector_options(reflector_options(options));
        if let Some(fifo) = options.fifo {
            builder = builder.fifo(fifo.kind());
        }
        if let Some(max_items) = options.pop_batch {
            builder = builder.pop_batch(max_items);
        }
        let informer = builder.build();
        let codec =
            Codec::new(CodecOptions::new().keep_managed_fields(!options.strip_managed_fields));
        informer.set_transform(codec.transform())?;
        Ok(Self::run(Arc::new(informer)))
    }

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
}
