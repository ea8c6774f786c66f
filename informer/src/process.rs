//! The informer's processing of popped batches (client-go's `processDeltas` and
//! `processDeltasInBatch`): the loop that pops the fifo, applies each batch to the cache under
//! one write lock and hands the batch's events to the listeners.

use std::sync::Arc;

use deltafifo::{Batch, DeletedObject, Delta, Item, Queue};
use indexer::{Indexer, ObjectKey};
use kube::Resource;

use crate::event::Event;
use crate::processor::Processor;

/// One cache write of a batch, and what it is told as once applied.
struct Write<K> {
    key: ObjectKey,
    change: Written<K>,
}

enum Written<K> {
    /// Stores the object: an add, or an update of what the cache held.
    Stored(Arc<K>),
    /// Removes the key: a deletion, told only if the cache held the key.
    Removed(DeletedObject<K>),
}

impl<K> Write<K> {
    fn of(key: ObjectKey, delta: Delta<K>) -> Self {
        let change = match delta {
            Delta::Deleted(deleted) => Written::Removed(deleted),
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                Written::Stored(obj)
            }
        };
        Self { key, change }
    }

    /// The object to store, or `None` to remove the key.
    fn stored(&self) -> Option<Arc<K>> {
        match &self.change {
            Written::Stored(obj) => Some(Arc::clone(obj)),
            Written::Removed(_) => None,
        }
    }
}

/// Applies a popped batch to the cache and distributes its events, each item as its changes
/// come, oldest first:
///
/// | change | cache | event |
/// |---|---|---|
/// | Added, Updated, Replaced, Sync; key cached | update | updated(cached, new), a resync when both have the same resource version |
/// | same; key not cached | add | added(new, in the batch's initial list or not) |
/// | Deleted; key cached | delete by key | deleted(last state or tombstone) |
/// | Deleted; key not cached | nothing | nothing: the object is not in the cache to leave it |
/// | a relist (in-order fifo) | a tombstone for each cached key it lacks, then each listed object as Replaced | as above |
/// | a resync (in-order fifo) | nothing | a resync of every cached object |
///
/// The whole batch is written under one write lock of the cache, and its events go to each
/// listener at once. Runs under the processor's lock, so a handler joining meanwhile sees the
/// cache either before or after the whole batch. A write the cache refuses is logged and told
/// to nobody (the next relist repairs it).
pub(crate) fn process_batch<K>(cache: &Indexer<K>, processor: &Processor<K>, batch: Batch<K>)
where
    K: Resource + Send + Sync + 'static,
{
    let in_initial_list = batch.in_initial_list();
    let listeners = processor.lock();
    let mut writes = Vec::with_capacity(batch.len());
    let mut events = Vec::new();
    for item in batch {
        match item {
            Item::Deltas(deltas) => {
                let (key, deltas) = deltas.into_parts();
                let mut key = Some(key);
                let mut deltas = deltas.peekable();
                while let Some(delta) = deltas.next() {
                    // The key is cloned for all but the last of its deltas.
                    let key = match deltas.peek() {
                        Some(_) => key.clone(),
                        None => key.take(),
                    };
                    writes.extend(key.map(|key| Write::of(key, delta)));
                }
            }
            Item::Replaced(list) => {
                for tombstone in list.deletions(cache) {
                    let key = tombstone.key.clone();
                    let deleted = DeletedObject::Unknown(Box::new(tombstone));
                    writes.push(Write::of(key, Delta::Deleted(deleted)));
                }
                for (key, obj) in list.into_objects() {
                    writes.push(Write::of(key, Delta::Replaced(obj)));
                }
            }
            Item::Resync => events.extend(
                cached_entries(cache)
                    .into_iter()
                    .map(|(key, obj)| Event::updated(key, Arc::clone(&obj), obj, true)),
            ),
        }
    }
    let previous = cache.write_batch(writes.iter().map(|write| (&write.key, write.stored())));
    events.reserve(writes.len());
    for (write, previous) in writes.into_iter().zip(previous) {
        let Write { key, change } = write;
        match (change, previous) {
            (_, Err(error)) => log_cache_error(&key, &error),
            (Written::Stored(obj), Ok(Some(old))) => {
                let resync = same_resource_version(old.as_ref(), obj.as_ref());
                events.push(Event::updated(key, old, obj, resync));
            }
            (Written::Stored(obj), Ok(None)) => {
                events.push(Event::added(key, obj, in_initial_list));
            }
            (Written::Removed(deleted), Ok(Some(_))) => events.push(Event::deleted(key, deleted)),
            (Written::Removed(_), Ok(None)) => {}
        }
    }
    listeners.distribute(events);
}

/// Every cached object with its key (the cache's own key, not computed again), for a handler
/// joining a running informer and for a resync. Consistent when called under the processor's
/// lock, which every write to the cache holds.
pub(crate) fn cached_entries<K>(cache: &Indexer<K>) -> Vec<(ObjectKey, Arc<K>)> {
    cache
        .list_keys()
        .into_iter()
        .filter_map(|key| {
            let obj = cache.get_by_key(&key)?;
            Some((key, obj))
        })
        .collect()
}

fn log_cache_error(key: &ObjectKey, error: &indexer::Error) {
    tracing::warn!(%key, %error, "cache rejected a change; it is skipped until the next relist");
}

fn same_resource_version<K: Resource>(old: &K, new: &K) -> bool {
    old.meta().resource_version == new.meta().resource_version
}

/// Pops and processes batches of at most `max_items` until the fifo is closed and drained, or
/// `shutdown` fires.
pub(crate) async fn process_loop<K, Q>(
    fifo: &Q,
    max_items: usize,
    cache: &Indexer<K>,
    processor: &Processor<K>,
    shutdown: &tokio_util::sync::CancellationToken,
) where
    K: Resource + Send + Sync + 'static,
    Q: Queue<K>,
{
    while fifo
        .pop_batch(max_items, |batch| process_batch(cache, processor, batch))
        .await
        .is_ok()
    {
        if shutdown.is_cancelled() {
            return;
        }
        // A busy fifo never makes a pop wait: give the runtime a chance to run other tasks.
        tokio::task::consume_budget().await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use crate::FifoKind;
    use crate::testing::on_both_fifos;
    use crate::testing::{Event, Harness, Recorder, cm, eventually};

    fn add(name: &str, rv: &str, initial: bool) -> Event {
        Event::Add(name.into(), rv.into(), initial)
    }

    fn update(name: &str, old: &str, new: &str, same: bool) -> Event {
        Event::Update(name.into(), old.into(), new.into(), same)
    }

    async fn deltas_become_cache_transitions(kind: FifoKind) {
        let mut h = Harness::new(kind, Duration::ZERO);
        let recorder = Recorder::new("table");
        h.add(recorder.clone(), Duration::ZERO);
        h.start();

        h.fifo
            .replace(vec![cm("a", "1"), cm("b", "1")], "1".into())
            .unwrap();
        eventually("initial list", || recorder.events().len() == 2).await;
        h.fifo.update(cm("a", "2")).unwrap();
        eventually("update", || recorder.events().len() == 3).await;
        // A modification of an object the cache does not hold is an add.
        h.fifo.update(cm("c", "3")).unwrap();
        eventually("add", || recorder.events().len() == 4).await;
        // An add of a cached object is an update.
        h.fifo.add(cm("a", "4")).unwrap();
        eventually("update", || recorder.events().len() == 5).await;
        h.fifo.delete(cm("b", "5")).unwrap();
        eventually("delete", || recorder.events().len() == 6).await;
        // A relist: `a` unchanged (a sync update), `c` gone (a tombstone with its last state).
        // The delta fifo tells `a` first (queued first), the in-order one the tombstone first.
        h.fifo.replace(vec![cm("a", "4")], "6".into()).unwrap();
        eventually("relist", || recorder.events().len() == 8).await;
        // A delete of an object the cache does not hold tells nobody.
        h.fifo.delete(cm("gone", "7")).unwrap();
        h.fifo.update(cm("a", "8")).unwrap();
        eventually("the update after it", || recorder.events().len() == 9).await;

        let mut events = recorder.events();
        events[6..8].sort_by(|a, b| a.name().cmp(b.name()));
        assert_eq!(
            events,
            vec![
                add("a", "1", true),
                add("b", "1", true),
                update("a", "1", "2", false),
                add("c", "3", false),
                update("a", "2", "4", false),
                Event::Delete("b".into(), Some("5".into()), false),
                update("a", "4", "4", false),
                Event::Delete("c".into(), Some("3".into()), true),
                update("a", "4", "8", false),
            ]
        );
        assert_eq!(h.cache.list_keys().len(), 1);
        assert_eq!(h.fifo.synced_resource_version(), "8");
        h.stop().await;
    }

    on_both_fifos!(deltas_become_cache_transitions);

    async fn the_cache_is_updated_before_handlers_hear(kind: FifoKind) {
        let mut h = Harness::new(kind, Duration::ZERO);
        let cache = h.cache.clone();
        let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let handler = {
            let (on_add, on_delete) = (cache.clone(), cache);
            let (seen_add, seen_delete) = (seen.clone(), seen.clone());
            crate::handler()
                .on_add(
                    move |obj: std::sync::Arc<k8s_openapi::api::core::v1::ConfigMap>, _| {
                        seen_add.lock().push(on_add.get(&obj).unwrap().is_some());
                    },
                )
                .on_delete(move |obj| {
                    let obj = obj.object().cloned().unwrap();
                    seen_delete
                        .lock()
                        .push(on_delete.get(&obj).unwrap().is_none());
                })
        };
        h.processor.add(handler, Duration::ZERO, Vec::new).unwrap();
        h.start();
        h.fifo.add(cm("a", "1")).unwrap();
        eventually("the add", || seen.lock().len() == 1).await;
        h.fifo.delete(cm("a", "2")).unwrap();
        eventually("the delete", || seen.lock().len() == 2).await;
        assert_eq!(*seen.lock(), vec![true, true]);
        h.stop().await;
    }

    on_both_fifos!(the_cache_is_updated_before_handlers_hear);

    async fn resync_reaches_only_the_handlers_due(kind: FifoKind) {
        let mut h = Harness::new(kind, Duration::from_secs(1));
        let due = Recorder::new("due");
        let never = Recorder::new("never");
        h.add(due.clone(), Duration::from_secs(1));
        h.add(never.clone(), Duration::ZERO);
        h.start();
        h.fifo.replace(vec![cm("a", "1")], "1".into()).unwrap();
        eventually("initial adds", || {
            due.events().len() == 1 && never.events().len() == 1
        })
        .await;

        // Not due yet: the check resyncs nothing.
        h.resync();
        assert!(h.fifo.is_empty());
        tokio::time::advance(Duration::from_secs(1)).await;
        h.resync();
        eventually("resync", || due.events().len() == 2).await;
        assert_eq!(due.events()[1], update("a", "1", "1", true));

        // An unchanged object in a relist is a sync notification too: only for the handler due.
        h.fifo.replace(vec![cm("a", "1")], "2".into()).unwrap();
        eventually("relist", || due.events().len() == 3).await;
        assert_eq!(due.events()[2], update("a", "1", "1", false));
        // A real change reaches everybody.
        h.fifo.update(cm("a", "3")).unwrap();
        eventually("change", || {
            due.events().len() == 4 && never.events().len() == 2
        })
        .await;
        assert_eq!(never.events()[1], update("a", "1", "3", false));
        h.stop().await;
    }

    on_both_fifos!(resync_reaches_only_the_handlers_due, start_paused = true);

    /// Replays a handler's events into a map, checking that each one fits what the handler knew.
    fn replay(events: &[Event]) -> HashMap<String, String> {
        let mut state = HashMap::new();
        for event in events {
            match event {
                Event::Add(name, rv, _) => {
                    assert!(
                        state.insert(name.clone(), rv.clone()).is_none(),
                        "duplicate add of {name}"
                    );
                }
                Event::Update(name, old, new, _) => {
                    assert_eq!(
                        state.get(name),
                        Some(old),
                        "update of {name} from an unseen state"
                    );
                    state.insert(name.clone(), new.clone());
                }
                Event::Delete(name, _, _) => {
                    assert!(state.remove(name).is_some(), "delete of unseen {name}");
                }
            }
        }
        state
    }

    async fn a_late_handler_sees_the_cache_then_live_events_without_gap_or_duplicate(
        kind: FifoKind,
    ) {
        const WRITES: u64 = 20_000;
        const LATE_HANDLERS: u64 = 10;
        let mut h = Harness::new(kind, Duration::ZERO);
        h.start();
        h.fifo.replace(Vec::new(), "0".into()).unwrap();
        // The producer is an OS thread, so it writes while the pop loop is mid-batch and while
        // handlers join; it reports how far it got.
        let written = std::sync::Arc::new(AtomicU64::new(0));
        let producer = std::thread::spawn({
            let fifo = h.fifo.clone();
            let written = std::sync::Arc::clone(&written);
            move || {
                let mut rng = 7u64;
                for rv in 1..=WRITES {
                    rng = rng
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let name = format!("o{}", (rng >> 33) % 300);
                    let obj = cm(&name, &rv.to_string());
                    match (rng >> 20) % 3 {
                        0 => fifo.delete(obj).unwrap(),
                        _ => fifo.update(obj).unwrap(),
                    }
                    written.store(rv, Ordering::Release);
                }
            }
        });
        // Handlers join at points spread over the producer's run, while the cache is busy.
        let mut late = Vec::new();
        for i in 1..=LATE_HANDLERS {
            let join_at = i * WRITES / (LATE_HANDLERS + 1);
            while written.load(Ordering::Acquire) < join_at {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let recorder = Recorder::new(&format!("late-{i}"));
            h.add(recorder.clone(), Duration::ZERO);
            late.push(recorder);
        }
        tokio::task::spawn_blocking(move || producer.join().unwrap())
            .await
            .unwrap();
        eventually("fifo drained", || h.fifo.is_empty()).await;
        eventually("handlers idle", || {
            h.processor.buffer_lengths().iter().all(|b| b.len == 0)
        })
        .await;
        let expected: HashMap<String, String> = h
            .cache
            .list()
            .iter()
            .map(|obj| {
                (
                    obj.metadata.name.clone().unwrap(),
                    obj.metadata.resource_version.clone().unwrap(),
                )
            })
            .collect();
        for recorder in &late {
            eventually("handler caught up", || {
                replay(&recorder.events()) == expected
            })
            .await;
        }
        h.stop().await;
    }

    on_both_fifos!(
        a_late_handler_sees_the_cache_then_live_events_without_gap_or_duplicate,
        flavor = "multi_thread",
        worker_threads = 2
    );
}
