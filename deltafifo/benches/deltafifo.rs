//! The DeltaFIFO benchmark workloads `df_1`, `df_2a`, `df_2b`, sized as client-go's.
//!
//! Object i: namespace `ns-{i % 100}`, name `obj-{i}`, a resourceVersion, no data. The consumer
//! applies each delta to an `Indexer` with the namespace index (update-or-add, or delete). The
//! fifo is configured as an informer's: the indexer is its known objects and relists emit
//! `Replaced`. Every object is built before timing; each timed run starts from a fresh fifo.

use std::hint::black_box;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use indexer::{Indexer, Indexers, NAMESPACE_INDEX, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube_rt_deltafifo::{Delta, DeltaFifo, DeltaFifoOptions, Deltas};

const OBJECTS: usize = 100_000;
const UPDATES: usize = 1_000_000;

fn object(i: usize, rv: usize) -> Arc<ConfigMap> {
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

fn cache() -> Indexer<ConfigMap> {
    Indexer::new(Indexers::new().with_namespace())
}

fn informer_fifo(cache: &Indexer<ConfigMap>) -> DeltaFifo<ConfigMap> {
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// df_1: replace(100k) then exactly 100k pops into an empty indexer.
fn df_1(
    rt: &tokio::runtime::Runtime,
    objects: &[Arc<ConfigMap>],
) -> (Duration, Indexer<ConfigMap>, DeltaFifo<ConfigMap>) {
    let cache = cache();
    let fifo = informer_fifo(&cache);
    let list = objects.to_vec();
    let started = Instant::now();
    fifo.replace(list, "100000".into()).expect("replace");
    rt.block_on(async {
        for _ in 0..OBJECTS {
            fifo.pop(|deltas, _| apply(&cache, deltas))
                .await
                .expect("pop");
        }
    });
    (started.elapsed(), cache, fifo)
}

/// df_2a: 1M updates into a fifo over a pre-filled indexer, then exactly 100k pops of 10 deltas.
fn df_2a(
    rt: &tokio::runtime::Runtime,
    cache: &Indexer<ConfigMap>,
    updates: &[Arc<ConfigMap>],
) -> (Duration, usize) {
    let fifo = informer_fifo(cache);
    let started = Instant::now();
    for obj in updates {
        fifo.update(Arc::clone(obj)).expect("update");
    }
    let applied = rt.block_on(async {
        let mut applied = 0;
        for _ in 0..OBJECTS {
            let (n, replaced) = fifo
                .pop(|deltas, _| apply(cache, deltas))
                .await
                .expect("pop");
            drop(replaced);
            applied += n;
        }
        applied
    });
    (started.elapsed(), applied)
}

/// df_2b: the same updates from a producer thread while the consumer pops concurrently; the
/// producer closes the fifo and the consumer stops at `Closed`.
fn df_2b(
    rt: &tokio::runtime::Runtime,
    cache: &Indexer<ConfigMap>,
    updates: &Arc<Vec<Arc<ConfigMap>>>,
) -> (Duration, usize) {
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
    let took = started.elapsed();
    producer.join().expect("producer");
    (took, applied)
}

fn bench_deltafifo(c: &mut Criterion) {
    let rt = runtime();
    let objects: Vec<Arc<ConfigMap>> = (0..OBJECTS).map(|i| object(i, i + 1)).collect();
    let updates: Arc<Vec<Arc<ConfigMap>>> = Arc::new(
        (0..UPDATES)
            .map(|j| object(j % OBJECTS, 100_001 + j))
            .collect(),
    );

    // Check each workload once before timing it.
    let (_, cache, fifo) = df_1(&rt, &objects);
    assert_eq!(cache.len(), OBJECTS);
    assert_eq!(
        cache
            .index_keys(NAMESPACE_INDEX, "ns-7")
            .expect("index")
            .len(),
        1000
    );
    assert!(fifo.has_synced() && fifo.is_empty());
    assert_eq!(df_2a(&rt, &cache, &updates).1, UPDATES);
    assert_eq!(df_2b(&rt, &cache, &updates).1, UPDATES);

    let mut group = c.benchmark_group("deltafifo");
    group.sample_size(10);
    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.bench_function("df_1_replace_100k_then_pop_into_indexer", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| black_box(df_1(&rt, &objects)).0).sum())
    });
    group.throughput(Throughput::Elements(UPDATES as u64));
    group.bench_function("df_2a_1m_updates_then_100k_pops", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| df_2a(&rt, &cache, &updates).0).sum())
    });
    group.bench_function("df_2b_1m_updates_with_concurrent_pops", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| df_2b(&rt, &cache, &updates).0).sum())
    });
    group.finish();
}

criterion_group!(benches, bench_deltafifo);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
