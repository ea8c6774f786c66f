//! A user's lean projection of a Pod as a [`Peer`]: our informer over `Api<LeanPod>`, where
//! `LeanPod` holds only what a scheduler-style controller reads (identity, labels, the node,
//! the phase), deserialized straight from the wire; every other field is skipped while decoding.
//! The `lean` figures of `informer` show what such a type saves over caching whole Pods (the
//! informer crate's `lean_projection` example shows the same idea for users).

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use informer::SharedIndexInformer;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::core::ObjectMeta;
use serde::Deserialize;

use crate::fixtures::Marker;
use crate::measure::{Peer, RunOptions};
use crate::ours::{RunningInformer, reflector_options};

/// The fields of a Pod the lean cache keeps.
#[derive(Debug, Clone, Deserialize)]
pub struct LeanPod {
    #[serde(deserialize_with = "identity")]
    metadata: ObjectMeta,
    #[serde(default, rename = "spec", deserialize_with = "node_name")]
    node: Option<String>,
    #[serde(default, rename = "status", deserialize_with = "phase")]
    phase: Option<String>,
}

/// Name, namespace, resource version, uid and labels, in an `ObjectMeta`.
fn identity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Identity {
        name: Option<String>,
        namespace: Option<String>,
        resource_version: Option<String>,
        uid: Option<String>,
        labels: Option<BTreeMap<String, String>>,
    }
    let id = Identity::deserialize(d)?;
    Ok(ObjectMeta {
        name: id.name,
        namespace: id.namespace,
        resource_version: id.resource_version,
        uid: id.uid,
        labels: id.labels,
        ..ObjectMeta::default()
    })
}

/// `spec.nodeName` only.
fn node_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    struct Spec {
        #[serde(rename = "nodeName")]
        node_name: Option<String>,
    }
    Ok(Option::<Spec>::deserialize(d)?.and_then(|spec| spec.node_name))
}

/// `status.phase` only.
fn phase<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    struct Status {
        phase: Option<String>,
    }
    Ok(Option::<Status>::deserialize(d)?.and_then(|status| status.phase))
}

informer::projection_of!(LeanPod, Pod);

/// Our informer of lean pods.
pub type OursLean = RunningInformer<LeanPod>;

impl Peer for OursLean {
    const NAME: &'static str = "ours-lean";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.per_namespace,
            "the lean peer watches cluster-wide only"
        );
        let informer = SharedIndexInformer::for_api(Api::<LeanPod>::all(client))
            .reflector_options(reflector_options(options))
            .build();
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
        // Read so that the projection's fields count as used: a controller reads them.
        let scheduled = self
            .informer
            .indexer()
            .list()
            .iter()
            .filter(|pod| pod.node.is_some() && pod.phase.is_some())
            .count();
        std::hint::black_box(scheduled);
        self.shut_down().await;
    }
}
