//! Helpers shared by the deltafifo integration tests, over the object type `Obj` of the
//! storage mode the suites are compiled for (typed or compact).
#![allow(dead_code)]

use std::sync::Arc;

use deltafifo::{DeletedObject, Delta, DeltaFifo, DeltaFifoOptions, DeltaType, Deltas, Item};
use indexer::{Indexer, KnownObjects, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::core::ObjectMeta;

pub use super::Obj;
use crate::fixture::Fixture;

/// A ConfigMap `ns/name` at resource version `rv`.
pub fn cm(ns: &str, name: &str, rv: u64) -> Arc<Obj> {
    Arc::new(Obj::from_typed(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            resource_version: Some(rv.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }))
}

/// A ConfigMap without a name (which no store can key).
pub fn unnamed() -> Arc<Obj> {
    Arc::new(Obj::from_typed(ConfigMap::default()))
}

/// A fifo whose known objects are `cache`, as an informer's is.
pub fn with_known(cache: &Indexer<Obj>) -> DeltaFifo<Obj> {
    DeltaFifo::new(DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())))
}

pub fn key(text: &str) -> ObjectKey {
    text.parse().expect("valid key")
}

pub fn rv_of(obj: &Obj) -> u64 {
    obj.meta()
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// A delta as (type, resource version of its object or None, is it a tombstone).
pub fn describe(delta: &Delta<Obj>) -> (DeltaType, Option<u64>, bool) {
    let tombstone = matches!(delta, Delta::Deleted(d) if d.is_tombstone());
    (
        delta.delta_type(),
        delta.object().map(|o| rv_of(o)),
        tombstone,
    )
}

pub fn describe_all(deltas: &Deltas<Obj>) -> Vec<(DeltaType, Option<u64>, bool)> {
    deltas.iter().map(describe).collect()
}

/// Applies popped deltas to `cache` the way an informer does.
pub fn apply(cache: &Indexer<Obj>, deltas: Deltas<Obj>) {
    let (key, deltas) = deltas.into_parts();
    for delta in deltas {
        apply_one(cache, &key, delta);
    }
}

/// Applies one delta of `key` to `cache`; returns whether a deletion found the object there.
pub fn apply_one(cache: &Indexer<Obj>, key: &ObjectKey, delta: Delta<Obj>) -> bool {
    match delta {
        Delta::Deleted(_) => cache.delete_key(key).is_some(),
        Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
            cache.put(key, obj).expect("put");
            true
        }
    }
}

/// What an in-order fifo's item comes to for a consumer whose cache is `cache` (before the
/// item is applied): the changes, each with its key, that a fifo reading the consumer's cache
/// itself (client-go's RealFIFO without atomic events) would have queued. A relist: a
/// tombstone for each cached key it lacks, then `Replaced` for each listed object; a resync:
/// `Sync` for each cached object, in key order.
pub fn expand(
    cache: &Indexer<Obj>,
    item: Item<Obj>,
) -> Vec<(ObjectKey, Delta<Obj>)> {
    match item {
        Item::Deltas(deltas) => {
            let (key, deltas) = deltas.into_parts();
            deltas.map(|delta| (key.clone(), delta)).collect()
        }
        Item::Replaced(list) => {
            let known: &dyn KnownObjects<Obj> = cache;
            let mut changes: Vec<_> = list
                .deletions(known)
                .into_iter()
                .map(|tombstone| {
                    let key = tombstone.key.clone();
                    (
                        key,
                        Delta::Deleted(DeletedObject::Unknown(Box::new(tombstone))),
                    )
                })
                .collect();
            let listed = list.into_objects();
            changes.extend(
                listed
                    .into_iter()
                    .map(|(key, obj)| (key, Delta::Replaced(obj))),
            );
            changes
        }
        Item::Resync => {
            let mut keys = cache.list_keys();
            keys.sort();
            keys.into_iter()
                .filter_map(|key| {
                    let obj = cache.get_by_key(&key)?;
                    Some((key, Delta::Sync(obj)))
                })
                .collect()
        }
    }
}

/// Expands `item` against `cache` and applies it; returns the changes, described as
/// `"Added ns/a 1"`, `"Deleted ns/a 1 tombstone"`, and so on.
pub fn resolve(cache: &Indexer<Obj>, item: Item<Obj>) -> Vec<String> {
    let changes = expand(cache, item);
    let described = changes
        .iter()
        .map(|(key, delta)| show(key, delta))
        .collect();
    for (key, delta) in changes {
        apply_one(cache, &key, delta);
    }
    described
}

/// A delta of `key`, as `"Added ns/a 1"` or `"Deleted ns/a 1 tombstone"`.
pub fn show(key: &ObjectKey, delta: &Delta<Obj>) -> String {
    let (kind, rv, tombstone) = describe(delta);
    let rv = rv.map_or_else(|| "-".to_owned(), |rv| rv.to_string());
    let tombstone = if tombstone { " tombstone" } else { "" };
    format!("{kind:?} {key} {rv}{tombstone}")
}

/// An item as a consumer receives it, before it is resolved: `"Updated ns/a 2"`,
/// `"Replaced [ns/a 1, ns/b 2] at 7"` or `"Resync"`.
pub fn show_item(item: &Item<Obj>) -> String {
    match item {
        Item::Deltas(deltas) => deltas
            .iter()
            .map(|delta| show(deltas.key(), delta))
            .collect::<Vec<_>>()
            .join(", "),
        Item::Replaced(list) => {
            let objects: Vec<String> = list
                .objects()
                .iter()
                .map(|(key, obj)| format!("{key} {}", rv_of(obj)))
                .collect();
            format!(
                "Replaced [{}] at {}",
                objects.join(", "),
                list.resource_version()
            )
        }
        Item::Resync => "Resync".to_owned(),
    }
}
