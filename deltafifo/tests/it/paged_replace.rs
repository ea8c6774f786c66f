//! `Store::replace_in_pages` on a `DeltaFifo`: the same deltas as one `replace`, pages queued
//! as they arrive, `has_synced` only once the first paged replace has finished and all its
//! keys are processed, and an abandoned session deletes nothing.

use super::support;

use std::sync::Arc;

use deltafifo::{DeltaFifo, DeltaFifoOptions, DeltaType};
use indexer::{Indexer, Indexers, Store};
use super::Obj;
use support::{apply, cm, describe_all, with_known};

type Described = Vec<(String, Vec<(DeltaType, Option<u64>, bool)>)>;

/// Every queued key with its deltas, in queue order.
fn queued(fifo: &DeltaFifo<Obj>) -> Described {
    fifo.snapshot()
        .iter()
        .map(|deltas| (deltas.key().to_string(), describe_all(deltas)))
        .collect()
}

/// Pops one key into `cache` as an informer does; returns whether it was in the initial list.
async fn pop_into(fifo: &DeltaFifo<Obj>, cache: &Indexer<Obj>) -> bool {
    fifo.pop(|deltas, initial| {
        apply(cache, deltas);
        initial
    })
    .await
    .unwrap()
}

/// A fifo whose consumer's cache already holds `known`, with `pending` queued on top.
fn fifo_with_history(
    known: &[Arc<Obj>],
    pending: &[Arc<Obj>],
) -> (DeltaFifo<Obj>, Indexer<Obj>) {
    let cache: Indexer<Obj> = Indexer::new(Indexers::new());
    for obj in known {
        cache.add(Arc::clone(obj)).unwrap();
    }
    let fifo = DeltaFifo::new(
        DeltaFifoOptions::new()
            .known_objects(Arc::new(cache.clone()))
            .emit_replaced(true),
    );
    for obj in pending {
        fifo.update(Arc::clone(obj)).unwrap();
    }
    (fifo, cache)
}

#[test]
fn pages_queue_the_same_deltas_as_one_replace() {
    // Known: a, b, c. Pending: an update of b and of d. The list has a, d and e.
    let known = [cm("ns", "a", 1), cm("ns", "b", 1), cm("ns", "c", 1)];
    let pending = [cm("ns", "b", 2), cm("ns", "d", 2)];
    let list = vec![cm("ns", "a", 3), cm("ns", "d", 3), cm("ns", "e", 3)];

    let (whole, _) = fifo_with_history(&known, &pending);
    whole.replace(list.clone(), "3".into()).unwrap();

    let (paged, _) = fifo_with_history(&known, &pending);
    let mut replace = paged.replace_in_pages();
    replace.page(list[..2].to_vec()).unwrap();
    replace.page(Vec::new()).unwrap();
    replace.page(list[2..].to_vec()).unwrap();
    replace.finish("3".into()).unwrap();

    let expected = queued(&whole);
    assert_eq!(queued(&paged), expected);
    // The spec, spelled out: b (queued, unlisted) and c (known, unlisted) get tombstones.
    let tombstoned: Vec<&str> = expected
        .iter()
        .filter(|(_, deltas)| deltas.last().is_some_and(|d| d.2))
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(tombstoned, ["ns/b", "ns/c"]);
}

#[test]
fn each_page_is_queued_before_the_next_arrives() {
    let (fifo, _) = fifo_with_history(&[cm("ns", "old", 1)], &[]);
    let mut replace = fifo.replace_in_pages();
    replace.page(vec![cm("ns", "a", 2)]).unwrap();
    assert_eq!(
        queued(&fifo),
        [(
            "ns/a".to_string(),
            vec![(DeltaType::Replaced, Some(2), false)]
        )]
    );
    replace.finish("2".into()).unwrap();
    assert_eq!(
        fifo.len(),
        2,
        "the unlisted known object is tombstoned at the end"
    );
}

#[tokio::test]
async fn the_first_paged_replace_syncs_once_finished_and_processed() {
    let cache: Indexer<Obj> = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    let mut replace = fifo.replace_in_pages();

    replace
        .page(vec![cm("ns", "a", 1), cm("ns", "b", 1)])
        .unwrap();
    for _ in 0..2 {
        assert!(
            pop_into(&fifo, &cache).await,
            "keys of the first list are in the initial list"
        );
    }
    assert!(
        !fifo.has_synced(),
        "a drained first page is not the whole first list"
    );

    replace.page(vec![cm("ns", "c", 1)]).unwrap();
    replace.finish("1".into()).unwrap();
    assert!(!fifo.has_synced(), "c is still to be processed");
    assert!(pop_into(&fifo, &cache).await);
    assert!(fifo.has_synced());
    assert_eq!(cache.len(), 3);
}

#[test]
fn an_empty_first_paged_replace_syncs_at_once() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    let mut replace = fifo.replace_in_pages();
    replace.page(Vec::new()).unwrap();
    assert!(!fifo.has_synced());
    replace.finish("1".into()).unwrap();
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn an_abandoned_paged_replace_deletes_nothing_and_the_next_one_completes_it() {
    let (fifo, cache) = fifo_with_history(&[cm("ns", "a", 1), cm("ns", "b", 1)], &[]);

    // A relist fails after its first page: that page is queued, nothing is tombstoned.
    let mut abandoned = fifo.replace_in_pages();
    abandoned.page(vec![cm("ns", "x", 2)]).unwrap();
    drop(abandoned);
    assert_eq!(
        queued(&fifo),
        [(
            "ns/x".to_string(),
            vec![(DeltaType::Replaced, Some(2), false)]
        )]
    );
    pop_into(&fifo, &cache).await;

    // The retry lists a and y only: b and x, which it does not list, get tombstones.
    let mut replace = fifo.replace_in_pages();
    replace
        .page(vec![cm("ns", "a", 3), cm("ns", "y", 3)])
        .unwrap();
    replace.finish("3".into()).unwrap();
    let mut result = queued(&fifo);
    result.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        result,
        [
            (
                "ns/a".to_string(),
                vec![(DeltaType::Replaced, Some(3), false)]
            ),
            (
                "ns/b".to_string(),
                vec![(DeltaType::Deleted, Some(1), true)]
            ),
            (
                "ns/x".to_string(),
                vec![(DeltaType::Deleted, Some(2), true)]
            ),
            (
                "ns/y".to_string(),
                vec![(DeltaType::Replaced, Some(3), false)]
            ),
        ]
    );
}

#[tokio::test]
async fn an_abandoned_first_paged_replace_leaves_the_fifo_unsynced() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    let mut abandoned = fifo.replace_in_pages();
    abandoned.page(vec![cm("ns", "a", 1)]).unwrap();
    drop(abandoned);
    fifo.pop(|_, initial| assert!(initial)).await.unwrap();
    assert!(!fifo.has_synced(), "an abandoned first list is not a sync");

    // The retry is a whole replace (a streaming list, say): it completes the first list.
    fifo.replace(vec![cm("ns", "a", 2)], "2".into()).unwrap();
    assert!(!fifo.has_synced());
    fifo.pop(|_, initial| assert!(initial)).await.unwrap();
    assert!(fifo.has_synced());
}

#[test]
fn a_page_with_an_unkeyable_object_queues_nothing_of_that_page() {
    let fifo: DeltaFifo<Obj> = DeltaFifo::default();
    let mut replace = fifo.replace_in_pages();
    replace.page(vec![cm("ns", "a", 1)]).unwrap();
    let nameless = support::unnamed();
    assert!(replace.page(vec![cm("ns", "b", 1), nameless]).is_err());
    assert_eq!(fifo.list_keys(), ["ns/a".parse().unwrap()]);
    replace.finish("1".into()).unwrap();
    assert_eq!(fifo.len(), 1);
}
