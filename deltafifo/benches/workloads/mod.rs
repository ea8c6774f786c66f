//! The fifo workloads `df_1`, `df_2a`, `df_2b`, sized as client-go's, shared by the
//! criterion bench (`deltafifo.rs`) and the one-run-per-process runner (`rows.rs`): here on a
//! `DeltaFifo` popped one key at a time, as client-go's DeltaFIFO rows; in `queues` on either
//! fifo through the `Queue` trait, one item or a batch per pop.
//!
//! Object i: namespace `ns-{i % 100}`, name `obj-{i}`, a resourceVersion, no data. The consumer
//! applies each delta to an `Indexer` with the namespace index (update-or-add, or delete). The
//! fifo is configured as an informer's: the indexer is its known objects and relists emit
//! `Replaced`. Every object is built before timing; each timed run starts from a fresh fifo,
//! and asserts after the timing that it did the whole workload (the checks of client-go's
//! harness).

#![allow(dead_code)]

pub mod queues;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use deltafifo::{Delta, DeltaFifo, DeltaFifoOptions, Deltas};
use indexer::{Indexer, Indexers, NAMESPACE_INDEX, ObjectKey, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;

/// Objects (keys) of every workload.
pub const OBJECTS: usize = 100_000;
/// Updates of `df_2a` and `df_2b`.
pub const UPDATES: usize = 1_000_000;

/// Object `i` at resource version `rv`.
pub fn object(i: usize, rv: usize) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(format!("ns-{}", i % 100)),
            name: Some(format!("obj-{i}")),
            resource_version: Some(rv.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

/// The listed objects `0..OBJECTS` at resource versions `1..=OBJECTS`.
pub fn listed() -> Vec<Arc<ConfigMap>> {
    (0..OBJECTS).map(|i| object(i, i + 1)).collect()
}

/// Update `j` targets object `j % OBJECTS` at resource version `100_001 + j`.
pub fn updates() -> Arc<Vec<Arc<ConfigMap>>> {
    Arc::new(
        (0..UPDATES)
            .map(|j| object(j % OBJECTS, 100_001 + j))
            .collect(),
    )
}

/// An empty cache with the namespace index.
pub fn cache() -> Indexer<ConfigMap> {
    Indexer::new(Indexers::new().with_namespace())
}

/// A cache holding the listed objects.
pub fn filled_cache() -> Indexer<ConfigMap> {
    let cache = cache();
    for obj in listed() {
        cache.add(obj).expect("add");
    }
    cache
}

pub(crate) fn informer_fifo(cache: &Indexer<ConfigMap>) -> DeltaFifo<ConfigMap> {
    DeltaFifo::new(DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())))
}

/// Applies one key's deltas to the cache; returns how many deltas it applied and the objects
/// they replaced. Like an informer, which passes each replaced object on to its update
/// notification, the consumer releases them after `pop` returns, outside the fifo's lock.
fn apply(cache: &Indexer<ConfigMap>, deltas: Deltas<ConfigMap>) -> (usize, Vec<Arc<ConfigMap>>) {
    let applied = deltas.len();
    let mut replaced = Vec::with_capacity(applied);
    let (key, deltas) = deltas.into_parts();
    for delta in deltas {
        match delta {
            Delta::Deleted(_) => replaced.extend(cache.delete_key(&key)),
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                replaced.extend(cache.put(&key, obj).expect("put"));
            }
        }
    }
    (applied, replaced)
}

/// A single-threaded tokio runtime for the consumer.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// Checks what every `df_2` run leaves: 100k keys, and the last update of `ns-5/obj-99905`.
pub(crate) fn check_updated_cache(name: &str, cache: &Indexer<ConfigMap>) {
    assert_eq!(cache.len(), OBJECTS, "{name}: 100k keys cached");
    let key = ObjectKey::namespaced("ns-5", "obj-99905").expect("key");
    let rv = cache
        .get_by_key(&key)
        .and_then(|obj| obj.metadata.resource_version.clone());
    assert_eq!(
        rv.as_deref(),
        Some("1099906"),
        "{name}: the last update of ns-5/obj-99905 is cached"
    );
}

/// df_1: `replace(100k)` then exactly 100k pops into an empty indexer.
pub fn df_1(rt: &tokio::runtime::Runtime, objects: &[Arc<ConfigMap>]) -> Duration {
    let cache = cache();
    let fifo = informer_fifo(&cache);
    let list = objects.to_vec();
    let started = Instant::now();
    fifo.replace(list, "100000".into()).expect("replace");
    let applied = rt.block_on(async {
        let mut applied = 0;
        for _ in 0..OBJECTS {
            applied += fifo
                .pop(|deltas, _| apply(&cache, deltas).0)
                .await
                .expect("pop");
        }
        applied
    });
    let elapsed = started.elapsed();
    assert_eq!(applied, OBJECTS, "df_1: one delta applied per object");
    assert_eq!(cache.len(), OBJECTS, "df_1: 100k keys cached");
    let ns7 = cache.index_keys(NAMESPACE_INDEX, "ns-7").expect("index");
    assert_eq!(ns7.len(), 1000, "df_1: 1000 keys in ns-7");
    assert!(fifo.has_synced(), "df_1: synced");
    assert!(fifo.is_empty(), "df_1: nothing is left");
    elapsed
}

/// df_2a: 1M updates into a fifo over a pre-filled indexer, then exactly 100k pops of 10
/// deltas each.
pub fn df_2a(
    rt: &tokio::runtime::Runtime,
    cache: &Indexer<ConfigMap>,
    updates: &[Arc<ConfigMap>],
) -> Duration {
    let fifo = informer_fifo(cache);
    let started = Instant::now();
    for obj in updates {
        fifo.update(Arc::clone(obj)).expect("update");
    }
    let (applied, min, max) = rt.block_on(async {
        let (mut applied, mut min, mut max) = (0, usize::MAX, 0);
        for _ in 0..OBJECTS {
            let (n, replaced) = fifo
                .pop(|deltas, _| apply(cache, deltas))
                .await
                .expect("pop");
            drop(replaced);
            applied += n;
            min = min.min(n);
            max = max.max(n);
        }
        (applied, min, max)
    });
    let elapsed = started.elapsed();
    assert_eq!(applied, UPDATES, "df_2a: 1M deltas applied");
    assert_eq!((min, max), (10, 10), "df_2a: 10 deltas per pop");
    assert!(fifo.is_empty(), "df_2a: nothing is left");
    check_updated_cache("df_2a", cache);
    elapsed
}

/// df_2b: the same updates from a producer thread while the consumer pops concurrently; the
/// producer closes the fifo and the consumer stops at `Closed`.
pub fn df_2b(
    rt: &tokio::runtime::Runtime,
    cache: &Indexer<ConfigMap>,
    updates: &Arc<Vec<Arc<ConfigMap>>>,
) -> Duration {
    let fifo = informer_fifo(cache);
    let started = Instant::now();
    let producer = thread::spawn({
        let (fifo, updates) = (fifo.clone(), Arc::clone(updates));
        move || {
            for obj in updates.iter() {
                fifo.update(Arc::clone(obj)).expect("update");
            }
            fifo.close();
        }
    });
    let applied = rt.block_on(async {
        let mut applied = 0;
        while let Ok((n, replaced)) = fifo.pop(|deltas, _| apply(cache, deltas)).await {
            drop(replaced);
            applied += n;
        }
        applied
    });
    let elapsed = started.elapsed();
    producer.join().expect("producer");
    assert_eq!(applied, UPDATES, "df_2b: 1M deltas applied");
    check_updated_cache("df_2b", cache);
    elapsed
}
