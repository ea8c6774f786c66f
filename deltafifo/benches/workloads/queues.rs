//! The same workloads run through the [`Queue`] trait, so that both fifos run them alike: an
//! [`InOrderFifo`] one item per pop, and either fifo in batches of up to 1 000 (client-go's
//! batch size), each batch applied to the cache under one write lock as an informer applies it
//! (`Indexer::write_batch`; a relist's tombstones worked out against the cache). Every run
//! asserts after the timing that it did the whole workload.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use deltafifo::{Batch, Delta, InOrderFifo, InOrderFifoOptions, Item, Queue};
use indexer::{Indexer, NAMESPACE_INDEX, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;

use super::{OBJECTS, UPDATES, cache, check_updated_cache, informer_fifo};

/// client-go's batch size.
pub const BATCH: usize = 1_000;

/// Which fifo a run uses.
#[derive(Clone, Copy, Debug)]
pub enum Fifo {
    Deltas,
    InOrder,
}

/// What each write of a batch replaced (released by the caller, outside the fifo).
type Replaced = Vec<Result<Option<Arc<ConfigMap>>, indexer::Error>>;

/// Applies a batch to the cache under one write lock; returns how many changes it applied and
/// the objects they replaced.
fn apply_batch(cache: &Indexer<ConfigMap>, batch: Batch<ConfigMap>) -> (usize, Replaced) {
    let mut writes: Vec<(ObjectKey, Option<Arc<ConfigMap>>)> = Vec::with_capacity(batch.len());
    for item in batch {
        match item {
            Item::Deltas(deltas) => {
                let (key, deltas) = deltas.into_parts();
                for delta in deltas {
                    let obj = match delta {
                        Delta::Deleted(_) => None,
                        Delta::Added(obj)
                        | Delta::Updated(obj)
                        | Delta::Replaced(obj)
                        | Delta::Sync(obj) => Some(obj),
                    };
                    writes.push((key.clone(), obj));
                }
            }
            Item::Replaced(list) => {
                for tombstone in list.deletions(cache) {
                    writes.push((tombstone.key, None));
                }
                writes.extend(
                    list.into_objects()
                        .into_iter()
                        .map(|(key, obj)| (key, Some(obj))),
                );
            }
            Item::Resync => {}
        }
    }
    let replaced = cache.write_batch(writes.iter().map(|(key, obj)| (key, obj.clone())));
    (writes.len(), replaced)
}

/// Applies a batch to the cache one change at a time, as the single-key rows apply a popped
/// key's deltas; returns how many changes it applied and the objects they replaced.
fn apply_one_by_one(cache: &Indexer<ConfigMap>, batch: Batch<ConfigMap>) -> (usize, Replaced) {
    let mut replaced = Vec::with_capacity(batch.len());
    for item in batch {
        if let Item::Deltas(deltas) = item {
            let (key, deltas) = deltas.into_parts();
            for delta in deltas {
                replaced.push(match delta {
                    Delta::Deleted(_) => Ok(cache.delete_key(&key)),
                    Delta::Added(obj)
                    | Delta::Updated(obj)
                    | Delta::Replaced(obj)
                    | Delta::Sync(obj) => cache.put(&key, obj),
                });
            }
        }
    }
    (replaced.len(), replaced)
}

/// Pops `fifo` in batches of at most `max` into `cache` until `done` says so (given the
/// changes applied so far) or the fifo closes; returns the changes applied, the pops, and
/// the largest batch. One item at a time a pop is applied change by change, as the
/// single-key rows apply theirs; a batch is applied as an informer applies it.
async fn consume<Q: Queue<ConfigMap>>(
    fifo: &Q,
    cache: &Indexer<ConfigMap>,
    max: usize,
    done: impl Fn(usize) -> bool,
) -> (usize, usize, usize) {
    let (mut applied, mut pops, mut largest) = (0, 0, 0);
    while !done(applied) {
        let Ok((n, size, replaced)) = fifo
            .pop_batch(max, |batch| {
                let size = batch.len();
                let only_changes = batch
                    .items()
                    .iter()
                    .all(|item| matches!(item, Item::Deltas(_)));
                let (n, replaced) = if max == 1 && only_changes {
                    apply_one_by_one(cache, batch)
                } else {
                    apply_batch(cache, batch)
                };
                (n, size, replaced)
            })
            .await
        else {
            break;
        };
        drop(replaced);
        applied += n;
        pops += 1;
        largest = largest.max(size);
    }
    (applied, pops, largest)
}

/// df_1 through a queue: `replace(100k)` then pops of at most `max` items into an empty cache.
pub fn df_1(
    rt: &tokio::runtime::Runtime,
    kind: Fifo,
    objects: &[Arc<ConfigMap>],
    max: usize,
) -> Duration {
    let cache = cache();
    match kind {
        Fifo::Deltas => run_df_1(rt, informer_fifo(&cache), &cache, objects, max),
        Fifo::InOrder => run_df_1(rt, in_order_fifo(), &cache, objects, max),
    }
}

fn run_df_1<Q: Queue<ConfigMap>>(
    rt: &tokio::runtime::Runtime,
    fifo: Q,
    cache: &Indexer<ConfigMap>,
    objects: &[Arc<ConfigMap>],
    max: usize,
) -> Duration {
    let list = objects.to_vec();
    let started = Instant::now();
    fifo.replace(list, "100000".into()).expect("replace");
    let (applied, _, largest) = rt.block_on(consume(&fifo, cache, max, |n| n >= OBJECTS));
    let elapsed = started.elapsed();
    assert_eq!(applied, OBJECTS, "df_1: one change applied per object");
    assert!(largest <= max.max(1), "df_1: batches within the cap");
    assert_eq!(cache.len(), OBJECTS, "df_1: 100k keys cached");
    let ns7 = cache.index_keys(NAMESPACE_INDEX, "ns-7").expect("index");
    assert_eq!(ns7.len(), 1000, "df_1: 1000 keys in ns-7");
    assert!(fifo.has_synced(), "df_1: synced");
    assert!(fifo.is_empty(), "df_1: nothing is left");
    elapsed
}

/// df_2a through a queue: 1M updates into a fifo over a pre-filled cache, then pops of at
/// most `max` items until all are applied.
pub fn df_2a(
    rt: &tokio::runtime::Runtime,
    kind: Fifo,
    cache: &Indexer<ConfigMap>,
    updates: &[Arc<ConfigMap>],
    max: usize,
) -> Duration {
    match kind {
        Fifo::Deltas => run_df_2a(rt, informer_fifo(cache), cache, updates, max),
        Fifo::InOrder => run_df_2a(rt, in_order_fifo(), cache, updates, max),
    }
}

fn run_df_2a<Q: Queue<ConfigMap>>(
    rt: &tokio::runtime::Runtime,
    fifo: Q,
    cache: &Indexer<ConfigMap>,
    updates: &[Arc<ConfigMap>],
    max: usize,
) -> Duration {
    let started = Instant::now();
    for obj in updates {
        fifo.update(Arc::clone(obj)).expect("update");
    }
    let (applied, _, largest) = rt.block_on(consume(&fifo, cache, max, |n| n >= UPDATES));
    let elapsed = started.elapsed();
    assert_eq!(applied, UPDATES, "df_2a: 1M changes applied");
    assert!(largest <= max.max(1), "df_2a: batches within the cap");
    assert!(fifo.is_empty(), "df_2a: nothing is left");
    check_updated_cache("df_2a", cache);
    elapsed
}

/// df_2b through a queue: the same updates from a producer thread while the consumer pops
/// batches of at most `max` items; the producer closes the fifo and the consumer stops at
/// `Closed`.
pub fn df_2b(
    rt: &tokio::runtime::Runtime,
    kind: Fifo,
    cache: &Indexer<ConfigMap>,
    updates: &Arc<Vec<Arc<ConfigMap>>>,
    max: usize,
) -> Duration {
    match kind {
        Fifo::Deltas => run_df_2b(rt, informer_fifo(cache), cache, updates, max),
        Fifo::InOrder => run_df_2b(rt, in_order_fifo(), cache, updates, max),
    }
}

fn run_df_2b<Q: Queue<ConfigMap>>(
    rt: &tokio::runtime::Runtime,
    fifo: Q,
    cache: &Indexer<ConfigMap>,
    updates: &Arc<Vec<Arc<ConfigMap>>>,
    max: usize,
) -> Duration {
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
    let (applied, _, largest) = rt.block_on(consume(&fifo, cache, max, |_| false));
    let elapsed = started.elapsed();
    producer.join().expect("producer");
    assert_eq!(applied, UPDATES, "df_2b: 1M changes applied");
    assert!(largest <= max.max(1), "df_2b: batches within the cap");
    check_updated_cache("df_2b", cache);
    elapsed
}

/// An in-order fifo as the workloads' delta fifo is configured: no bound, no transform.
fn in_order_fifo() -> InOrderFifo<ConfigMap> {
    InOrderFifo::new(InOrderFifoOptions::new())
}
