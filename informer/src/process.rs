//! The informer's processing of popped deltas (client-go's `processDeltas`): the loop that pops
//! the fifo, applies each key's deltas to the cache and hands the notifications to the listeners.

use std::sync::Arc;

use deltafifo::{Delta, DeltaFifo, Deltas};
use indexer::{Indexer, ObjectKey};
use kube::Resource;

use crate::event::Event;
use crate::processor::Processor;

/// Applies one key's deltas, oldest first, to the cache, and after each one distributes the
/// matching notification:
///
/// | delta | cache | notification |
/// |---|---|---|
/// | Added, Updated, Replaced, Sync; key cached | update | update(cached, new), a resync when both have the same resource version |
/// | same; key not cached | add | add(new, is_in_initial_list) |
/// | Deleted | delete by key | delete(last state or tombstone) |
///
/// Runs under the processor's lock, so a handler joining meanwhile sees the cache either before
/// or after the whole batch. A cache error abandons the rest of the batch (the next relist repairs
/// it) and is logged.
pub(crate) fn process_deltas<K>(
    cache: &Indexer<K>,
    processor: &Processor<K>,
    deltas: Deltas<K>,
    is_in_initial_list: bool,
) where
    K: Resource + Send + Sync + 'static,
{
    let (key, deltas) = deltas.into_parts();
    let listeners = processor.lock();
    for delta in deltas {
        match delta {
            Delta::Deleted(deleted) => {
                let removed = cache.delete_key(&key);
                listeners.distribute(Event::deleted(key.clone(), deleted));
                drop(removed);
            }
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                match cache.put(&key, Arc::clone(&obj)) {
                    Ok(Some(old)) => {
                        let resync = same_resource_version(old.as_ref(), obj.as_ref());
                        listeners.distribute(Event::updated(key.clone(), old, obj, resync));
                    }
                    Ok(None) => {
                        listeners.distribute(Event::added(key.clone(), obj, is_in_initial_list))
                    }
                    Err(error) => {
                        log_cache_error(&key, &error);
                        return;
                    }
                }
            }
        }
    }
}

/// Every cached object with its key (the cache's own key, not computed again), for a handler
/// joining a running informer. Consistent when called under the processor's lock, which every
/// write to the cache holds.
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
    tracing::warn!(%key, %error, "cache rejected a delta; skipping the rest of this key's deltas until the next relist");
}

fn same_resource_version<K: Resource>(old: &K, new: &K) -> bool {
    old.meta().resource_version == new.meta().resource_version
}

/// Pops and processes deltas until the fifo is closed and drained, or `shutdown` fires.
pub(crate) async fn process_loop<K>(
    fifo: &DeltaFifo<K>,
    cache: &Indexer<K>,
    processor: &Processor<K>,
    shutdown: &tokio_util::sync::CancellationToken,
) where
    K: Resource + Send + Sync + 'static,
{
    while fifo
        .pop(|deltas, is_in_initial_list| {
            process_deltas(cache, processor, deltas, is_in_initial_list)
        })
        .await
        .is_ok()
    {
        if shutdown.is_cancelled() {
            return;
        }
        // A busy fifo never makes `pop` wait: give the runtime a chance to run other tasks.
        tokio::task::consume_budget().await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use indexer::Store;

    use crate::testing::{Event, Harness, Recorder, cm, eventually};

    fn add(name: &str, rv: &str, initial: bool) -> Event {
        Event::Add(name.into(), rv.into(), initial)
    }

    fn update(name: &str, old: &str, new: &str, same: bool) -> Event {
        Event::Update(name.into(), old.into(), new.into(), same)
    }

    #[tokio::test]
    async fn deltas_become_cache_transitions() {
        let mut h = Harness::new(Duration::ZERO);
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
        h.fifo.replace(vec![cm("a", "4")], "6".into()).unwrap();
        eventually("relist", || recorder.events().len() == 8).await;

        assert_eq!(
            recorder.events(),
            vec![
                add("a", "1", true),
                add("b", "1", true),
                update("a", "1", "2", false),
                add("c", "3", false),
                update("a", "2", "4", false),
                Event::Delete("b".into(), Some("5".into()), false),
                update("a", "4", "4", false),
                Event::Delete("c".into(), Some("3".into()), true),
            ]
        );
        assert_eq!(h.cache.list_keys().len(), 1);
        h.stop().await;
    }

    #[tokio::test]
    async fn the_cache_is_updated_before_handlers_hear() {
        let mut h = Harness::new(Duration::ZERO);
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

    #[tokio::test(start_paused = true)]
    async fn resync_reaches_only_the_handlers_due() {
        let mut h = Harness::new(Duration::from_secs(1));
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_late_handler_sees_the_cache_then_live_events_without_gap_or_duplicate() {
        const WRITES: u64 = 20_000;
        const LATE_HANDLERS: u64 = 10;
        let mut h = Harness::new(Duration::ZERO);
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
}
