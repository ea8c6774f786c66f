//! Helpers shared by the deltafifo integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use indexer::{Indexer, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube_rt_deltafifo::{Delta, DeltaFifo, DeltaFifoOptions, DeltaType, Deltas};

/// A ConfigMap `ns/name` at resource version `rv`.
pub fn cm(ns: &str, name: &str, rv: u64) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            resource_version: Some(rv.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

/// A fifo whose known objects are `cache`, as an informer's is.
pub fn with_known(cache: &Indexer<ConfigMap>) -> DeltaFifo<ConfigMap> {
    DeltaFifo::new(DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())))
}

pub fn key(text: &str) -> ObjectKey {
    text.parse().expect("valid key")
}

pub fn rv_of(obj: &ConfigMap) -> u64 {
    obj.metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// A delta as (type, resource version of its object or None, is it a tombstone).
pub fn describe(delta: &Delta<ConfigMap>) -> (DeltaType, Option<u64>, bool) {
    let tombstone = matches!(delta, Delta::Deleted(d) if d.is_tombstone());
    (
        delta.delta_type(),
        delta.object().map(|o| rv_of(o)),
        tombstone,
    )
}

pub fn describe_all(deltas: &Deltas<ConfigMap>) -> Vec<(DeltaType, Option<u64>, bool)> {
    deltas.iter().map(describe).collect()
}

/// Applies popped deltas to `cache` the way an informer does.
pub fn apply(cache: &Indexer<ConfigMap>, deltas: Deltas<ConfigMap>) {
    let (key, deltas) = deltas.into_parts();
    for delta in deltas {
        match delta {
            Delta::Deleted(_) => {
                cache.delete_key(&key);
            }
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                cache.put(&key, obj).expect("put");
            }
        }
    }
}
