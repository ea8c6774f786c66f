//! One test per DeltaFIFO rule (client-go-semantics.md §3).

use super::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use DeltaType::*;
use deltafifo::{Delta, DeltaFifo, DeltaFifoOptions, DeltaType, Deltas, Error};
use indexer::{Indexer, Indexers, Store};
use super::Obj;
use kube::Resource;
use support::{apply, cm, describe_all, key, with_known};

async fn pop(fifo: &DeltaFifo<Obj>) -> (Deltas<Obj>, bool) {
    fifo.pop(|deltas, initial| (deltas, initial))
        .await
        .expect("open fifo")
}

fn queue_keys(fifo: &DeltaFifo<Obj>) -> Vec<String> {
    fifo.list_keys().iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn queue_holds_each_key_once_in_order_of_first_enqueue() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.add(cm("ns", "b", 2)).unwrap();
    fifo.update(cm("ns", "a", 3)).unwrap();
    assert_eq!(queue_keys(&fifo), ["ns/a", "ns/b"]);
    let (a, _) = pop(&fifo).await;
    assert_eq!(
        describe_all(&a),
        [(Added, Some(1), false), (Updated, Some(3), false)]
    );
    assert_eq!(pop(&fifo).await.0.key(), &key("ns/b"));
}

#[tokio::test]
async fn added_then_updated_chains_are_never_merged() {
    let fifo = DeltaFifo::default();
    for rv in 1..=4 {
        fifo.update(cm("ns", "a", rv)).unwrap();
    }
    assert_eq!(pop(&fifo).await.0.len(), 4);
}

#[test]
fn delete_of_unknown_key_with_nothing_queued_is_ignored() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    fifo.delete(cm("ns", "a", 1)).unwrap();
    assert!(fifo.is_empty());

    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    fifo.delete(cm("ns", "a", 1)).unwrap();
    assert!(fifo.is_empty());
}

#[test]
fn delete_of_known_key_is_queued_with_the_last_state() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "a", 1)).unwrap();
    let fifo = with_known(&cache);
    fifo.delete(cm("ns", "a", 2)).unwrap();
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Deleted, Some(2), false)]
    );
}

#[test]
fn delete_of_queued_key_is_queued_even_without_known_objects() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.delete(cm("ns", "a", 2)).unwrap();
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Added, Some(1), false), (Deleted, Some(2), false)]
    );
}

#[test]
fn two_deletes_collapse_keeping_the_older_when_it_is_not_a_tombstone() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.delete(cm("ns", "a", 2)).unwrap();
    fifo.delete(cm("ns", "a", 3)).unwrap();
    // A relist without the object adds a tombstone, which collapses into the real delete too.
    fifo.replace(vec![], "9".into()).unwrap();
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Added, Some(1), false), (Deleted, Some(2), false)]
    );
}

#[test]
fn two_deletes_collapse_keeping_the_newer_when_the_older_is_a_tombstone() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "a", 1)).unwrap();
    let fifo = with_known(&cache);
    fifo.replace(vec![], "5".into()).unwrap();
    fifo.delete(cm("ns", "a", 6)).unwrap();
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Deleted, Some(6), false)]
    );
}

#[test]
fn replace_emits_replaced_for_every_listed_object() {
    let fifo = DeltaFifo::default();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2".into())
        .unwrap();
    let snapshot = fifo.snapshot();
    assert_eq!(describe_all(&snapshot[0]), [(Replaced, Some(1), false)]);
    assert_eq!(describe_all(&snapshot[1]), [(Replaced, Some(2), false)]);
}

#[test]
fn replace_emits_sync_when_configured_so() {
    let fifo = DeltaFifo::new(DeltaFifoOptions::new().emit_replaced(false));
    fifo.replace(vec![cm("ns", "a", 1)], "1".into()).unwrap();
    assert_eq!(describe_all(&fifo.snapshot()[0]), [(Sync, Some(1), false)]);
}

#[test]
fn replace_emits_tombstone_for_queued_key_missing_from_list() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "gone", 1)).unwrap();
    fifo.replace(vec![cm("ns", "kept", 2)], "2".into()).unwrap();
    assert_eq!(queue_keys(&fifo), ["ns/gone", "ns/kept"]);
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Added, Some(1), false), (Deleted, Some(1), true)]
    );
}

#[test]
fn replace_emits_tombstone_for_known_key_missing_from_list() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "gone", 1)).unwrap();
    cache.add(cm("ns", "kept", 2)).unwrap();
    let fifo = with_known(&cache);
    fifo.replace(vec![cm("ns", "kept", 3)], "3".into()).unwrap();
    let snapshot = fifo.snapshot();
    let gone = snapshot
        .iter()
        .find(|d| d.key() == &key("ns/gone"))
        .expect("tombstone queued");
    assert_eq!(describe_all(gone), [(Deleted, Some(1), true)]);
    match gone.newest() {
        Delta::Deleted(deleted) => assert!(deleted.is_tombstone()),
        other => panic!("expected a tombstone, got {other:?}"),
    }
}

#[test]
fn replace_skips_known_keys_with_pending_deltas() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "a", 1)).unwrap();
    let fifo = with_known(&cache);
    fifo.update(cm("ns", "a", 2)).unwrap();
    fifo.replace(vec![], "3".into()).unwrap();
    // One tombstone from the queued delta's state, not a second one from the known object.
    assert_eq!(
        describe_all(&fifo.snapshot()[0]),
        [(Updated, Some(2), false), (Deleted, Some(2), true)]
    );
}

#[test]
fn replace_with_an_unnamed_object_queues_nothing() {
    let fifo = DeltaFifo::default();
    let unnamed = support::unnamed();
    assert!(
        fifo.replace(vec![cm("ns", "a", 1), unnamed], "1".into())
            .is_err()
    );
    assert!(fifo.is_empty());
    assert!(!fifo.has_synced());
}

#[test]
fn resync_enqueues_sync_only_for_known_keys_without_pending_deltas() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "idle", 1)).unwrap();
    cache.add(cm("ns", "busy", 2)).unwrap();
    let fifo = with_known(&cache);
    fifo.update(cm("ns", "busy", 3)).unwrap();
    fifo.resync().unwrap();
    let snapshot = fifo.snapshot();
    assert_eq!(snapshot.len(), 2);
    let busy = snapshot
        .iter()
        .find(|d| d.key() == &key("ns/busy"))
        .unwrap();
    let idle = snapshot
        .iter()
        .find(|d| d.key() == &key("ns/idle"))
        .unwrap();
    assert_eq!(describe_all(busy), [(Updated, Some(3), false)]);
    assert_eq!(describe_all(idle), [(Sync, Some(1), false)]);
}

#[test]
fn resync_without_known_objects_does_nothing() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    fifo.resync().unwrap();
    assert!(fifo.is_empty());
}

#[test]
fn transform_applies_to_writes_and_relists_but_not_to_sync_or_tombstones() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "cached", 1)).unwrap();
    cache.add(cm("ns", "vanished", 2)).unwrap();
    let fifo = DeltaFifo::new(
        DeltaFifoOptions::new()
            .known_objects(Arc::new(cache.clone()))
            .transform(|obj: Arc<Obj>| {
                let mut obj = Arc::unwrap_or_clone(obj);
                obj.meta_mut().labels = Some([("transformed".to_string(), "yes".to_string())].into());
                Ok(Arc::new(obj))
            }),
    );
    let transformed =
        |delta: &Delta<Obj>| delta.object().is_some_and(|o| o.meta().labels.is_some());

    fifo.add(cm("ns", "new", 3)).unwrap();
    fifo.resync().unwrap();
    fifo.replace(vec![cm("ns", "cached", 4), cm("ns", "new", 5)], "5".into())
        .unwrap();
    for deltas in fifo.snapshot() {
        for delta in &deltas {
            let expected = matches!(delta.delta_type(), Added | Replaced);
            assert_eq!(
                transformed(delta),
                expected,
                "{} {:?}",
                deltas.key(),
                delta.delta_type()
            );
        }
    }
}

/// A freshly written object reaches the transform as its only owner, so the transform can
/// change it in place instead of copying it (`Arc::unwrap_or_clone`, a codec editing JSON).
#[test]
fn the_transform_is_the_only_owner_of_a_fresh_object() {
    let owners = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&owners);
    let fifo: DeltaFifo<Obj> = DeltaFifo::new(DeltaFifoOptions::new().transform(move |obj| {
        seen.lock().unwrap().push(Arc::strong_count(&obj));
        Ok(obj)
    }));
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.update(cm("ns", "a", 2)).unwrap();
    fifo.replace(vec![cm("ns", "b", 3)], "3".into()).unwrap();
    assert_eq!(*owners.lock().unwrap(), [1, 1, 1]);
}

#[test]
fn transform_error_is_returned_and_nothing_is_queued() {
    let fifo: DeltaFifo<Obj> =
        DeltaFifo::new(DeltaFifoOptions::new().transform(|_| Err("cannot strip fields".into())));
    let err = fifo.add(cm("ns", "a", 1)).unwrap_err();
    assert!(
        err.to_string().contains("ns/a") && err.to_string().contains("cannot strip fields"),
        "{err}"
    );
    assert!(fifo.is_empty());
}

#[tokio::test]
async fn pop_waits_until_something_is_queued() {
    let fifo = DeltaFifo::default();
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move { fifo.pop(|deltas, _| deltas.key().to_string()).await }
    });
    tokio::task::yield_now().await;
    assert!(!consumer.is_finished());
    fifo.add(cm("ns", "a", 1)).unwrap();
    assert_eq!(consumer.await.unwrap(), Ok("ns/a".to_string()));
}

#[tokio::test]
async fn adds_and_updates_are_queued_while_a_pop_is_processed() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    // The callback runs under the processing lock; writes that do not read the consumer's
    // cache go through meanwhile (here from the callback itself, which would otherwise deadlock).
    fifo.pop(|_, _| {
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.add(cm("ns", "b", 3)).unwrap();
    })
    .await
    .unwrap();
    assert_eq!(queue_keys(&fifo), ["ns/a", "ns/b"]);
    assert_eq!(
        describe_all(&pop(&fifo).await.0),
        [(Updated, Some(2), false)]
    );
}

#[tokio::test]
async fn a_delete_waits_for_the_pop_being_processed_and_sees_its_result() {
    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    fifo.add(cm("ns", "a", 1)).unwrap();
    // The deleter starts only once the pop has taken `ns/a` and runs its callback: a delete
    // issued before the pop would simply be queued behind the add and popped with it.
    let in_callback = Arc::new(AtomicBool::new(false));
    let deleter = std::thread::spawn({
        let (fifo, in_callback) = (fifo.clone(), Arc::clone(&in_callback));
        move || {
            while !in_callback.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            // Neither queued nor known until the pop below is applied: ignored if it ran then.
            fifo.delete(cm("ns", "a", 2)).unwrap();
        }
    });
    fifo.pop(|deltas, _| {
        in_callback.store(true, Ordering::SeqCst);
        // Give the deleter every chance to run inside this callback, were it not excluded.
        for _ in 0..1_000 {
            std::thread::yield_now();
        }
        apply(&cache, deltas);
    })
    .await
    .unwrap();
    deleter.join().unwrap();
    let queued = fifo.snapshot();
    assert_eq!(queued.len(), 1, "the delete was lost");
    assert_eq!(describe_all(&queued[0]), [(Deleted, Some(2), false)]);
}

#[tokio::test]
async fn close_lets_pop_drain_then_returns_closed() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.close();
    assert!(fifo.is_closed());
    assert_eq!(pop(&fifo).await.0.key(), &key("ns/a"));
    assert_eq!(fifo.pop(|_, _| ()).await, Err(Error::Closed));
}

#[tokio::test]
async fn close_wakes_a_waiting_pop() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move { fifo.pop(|_, _| ()).await }
    });
    tokio::task::yield_now().await;
    fifo.close();
    assert_eq!(consumer.await.unwrap(), Err(Error::Closed));
}

#[tokio::test]
async fn synced_after_first_replace_is_fully_popped_and_processed() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "gone", 1)).unwrap();
    let fifo = with_known(&cache);
    fifo.replace(vec![cm("ns", "a", 2), cm("ns", "b", 3)], "3".into())
        .unwrap();
    assert!(!fifo.has_synced());
    // Three keys: two listed and one tombstone.
    for expected_initial in [true, true, true] {
        let synced_during = fifo
            .pop(|deltas, initial| {
                assert_eq!(initial, expected_initial);
                apply(&cache, deltas);
                fifo.has_synced()
            })
            .await
            .unwrap();
        assert!(
            !synced_during,
            "synced must be signalled after the callback returns"
        );
    }
    assert!(fifo.has_synced());
    fifo.update(cm("ns", "a", 4)).unwrap();
    assert!(
        !pop(&fifo).await.1,
        "later deltas are not in the initial list"
    );
}

#[test]
fn empty_first_list_is_synced_at_once() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    fifo.replace(vec![], "1".into()).unwrap();
    assert!(fifo.has_synced());
}

#[test]
fn a_write_before_the_first_replace_counts_as_synced() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    assert!(fifo.has_synced());
    // A later replace does not un-sync it.
    fifo.replace(vec![cm("ns", "b", 2)], "2".into()).unwrap();
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn synced_future_resolves_when_the_initial_list_is_processed() {
    let fifo = DeltaFifo::default();
    fifo.replace(vec![cm("ns", "a", 1)], "1".into()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let waiter = tokio::spawn({
        let (fifo, done) = (fifo.clone(), Arc::clone(&done));
        async move {
            fifo.synced().await;
            done.store(true, Ordering::SeqCst);
        }
    });
    tokio::task::yield_now().await;
    assert!(!done.load(Ordering::SeqCst));
    pop(&fifo).await;
    waiter.await.unwrap();
    assert!(done.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_panicking_callback_still_counts_toward_sync() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    fifo.replace(vec![cm("ns", "a", 1)], "1".into()).unwrap();
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move { fifo.pop(|_, _| panic!("handler bug")).await }
    });
    assert!(consumer.await.unwrap_err().is_panic());
    assert!(fifo.has_synced());
}

#[test]
fn store_reads_show_the_newest_queued_state() {
    let fifo = DeltaFifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.update(cm("ns", "a", 2)).unwrap();
    fifo.add(cm("ns", "b", 3)).unwrap();
    let newest = fifo.get_by_key(&key("ns/a")).unwrap();
    assert_eq!(newest.meta().resource_version.as_deref(), Some("2"));
    assert_eq!(fifo.list().len(), 2);
    assert_eq!(fifo.len(), 2);
}
