//! Our stack with compact storage as a [`Peer`]: a `SharedIndexInformer<Compact<Pod>>` whose
//! objects are captured from the wire without decoding their bodies and kept encoded by the
//! default codec (zstd with a dictionary trained on the first pods; `managedFields` dropped only
//! in the stripped runs, as the typed peer strips them).

use std::sync::Arc;

use anyhow::Result;
use indexer::compact::{Codec, CodecOptions, Compact};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};
use crate::ours::{RunningInformer, informer_builder, running_informer_peer};
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
        let informer = informer_builder(Api::<Compact<Pod>>::all(client), options).build();
        let codec =
            Codec::new(CodecOptions::new().keep_managed_fields(!options.strip_managed_fields));
        informer.set_transform(codec.transform())?;
        Ok(Self::run(Arc::new(informer)))
    }

    running_informer_peer!();
}
