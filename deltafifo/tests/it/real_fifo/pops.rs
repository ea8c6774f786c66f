//! Sync, closing, and how batches are cut.

use super::*;

use std::time::Duration;

use deltafifo::{Batch, Error};
use support::show_item;

/// Objects a case lists or updates.
type Objects = Vec<Arc<Obj>>;

/// A case of batching: its name, the initial list, the updates after it, the cap, and the
/// batches expected.
type BatchCase<'a> = (&'a str, Objects, Objects, usize, Vec<Vec<&'a str>>);

/// Every batch a consumer pops with `max` items at most, as described items, with whether it
/// was in the initial list.
async fn batches(fifo: &Fifo, max: usize) -> Vec<(Vec<String>, bool)> {
    let mut popped = Vec::new();
    while !fifo.is_empty() {
        let batch = fifo
            .pop_batch(max, |batch: Batch<Obj>| {
                let items = batch.items().iter().map(show_item).collect();
                (items, batch.in_initial_list())
            })
            .await
            .unwrap();
        popped.push(batch);
    }
    popped
}

#[tokio::test]
async fn synced_once_the_initial_relist_with_its_tombstones_is_processed() {
    let cache = known(&[obj("foo", 5), obj("bar", 6), obj("baz", 7)]);
    let fifo = Fifo::default();
    fifo.replace(vec![obj("foo", 5)], "0".into()).unwrap();
    assert!(!fifo.has_synced());
    let (changes, initial, synced_during) = fifo
        .pop_batch(1, |batch| {
            let initial = batch.in_initial_list();
            let changes: Vec<String> = batch
                .into_iter()
                .flat_map(|item| resolve(&cache, item))
                .collect();
            (changes, initial, fifo.has_synced())
        })
        .await
        .unwrap();
    assert!(initial);
    assert!(
        !synced_during,
        "synced only once the processing has returned"
    );
    assert_eq!(
        changes,
        strings(&[
            "Deleted ns/bar 6 tombstone",
            "Deleted ns/baz 7 tombstone",
            "Replaced ns/foo 5"
        ])
    );
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn has_synced_follows_the_first_relist() {
    // Nothing happened: not synced.
    assert!(!Fifo::default().has_synced());
    // A write before any relist: synced.
    let fifo = Fifo::default();
    fifo.add(obj("a", 1)).unwrap();
    assert!(fifo.has_synced());
    // An empty first relist is an item too: synced once it is processed.
    let fifo = Fifo::default();
    fifo.replace(vec![], "0".into()).unwrap();
    assert!(!fifo.has_synced());
    pop(&fifo).await;
    assert!(fifo.has_synced());
    // A first relist of two objects: one pop.
    let fifo = Fifo::default();
    fifo.replace(vec![obj("a", 1), obj("b", 2)], "0".into())
        .unwrap();
    assert!(!fifo.has_synced());
    pop(&fifo).await;
    assert!(fifo.has_synced());
    // A broken list naming one key twice is still one item.
    let fifo = Fifo::default();
    fifo.replace(vec![obj("a", 1), obj("a", 2)], "0".into())
        .unwrap();
    assert_eq!(fifo.len(), 1);
    pop(&fifo).await;
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn close_unblocks_every_waiting_pop() {
    let fifo = Fifo::default();
    let pops: Vec<_> = (0..10)
        .map(|_| {
            let fifo = fifo.clone();
            tokio::spawn(async move { fifo.pop_batch(10, |_| ()).await })
        })
        .collect();
    tokio::task::yield_now().await;
    fifo.close();
    for pop in pops {
        let popped = tokio::time::timeout(Duration::from_secs(10), pop).await;
        assert_eq!(popped.expect("woken").unwrap(), Err(Error::Closed));
    }
}

#[tokio::test]
async fn batches_are_cut_at_the_cap_a_repeated_key_and_the_initial_list() {
    const UNLIMITED: usize = 999_999;
    let (o1, o2, o3, o4) = (
        obj("foo1", 5),
        obj("foo2", 5),
        obj("foo3", 5),
        obj("foo4", 5),
    );
    let list = |objects: &[&Arc<Obj>]| objects.iter().map(|o| Arc::clone(o)).collect();
    let cases: Vec<BatchCase> = vec![
        (
            "unique items: the initial list alone",
            list(&[&o1, &o2, &o3]),
            vec![],
            UNLIMITED,
            vec![vec!["Replaced [ns/foo1 5, ns/foo2 5, ns/foo3 5] at 123"]],
        ),
        (
            "the initial list, then two updates in one batch",
            list(&[&o1, &o2]),
            list(&[&o3, &o4]),
            2,
            vec![
                vec!["Replaced [ns/foo1 5, ns/foo2 5] at 123"],
                vec!["Updated ns/foo3 5", "Updated ns/foo4 5"],
            ],
        ),
        (
            "one key updated twice: two batches",
            list(&[&o1]),
            list(&[&o1, &o1]),
            UNLIMITED,
            vec![
                vec!["Replaced [ns/foo1 5] at 123"],
                vec!["Updated ns/foo1 5"],
                vec!["Updated ns/foo1 5"],
            ],
        ),
        (
            "the repeated key ends the batch",
            list(&[&o1, &o2]),
            list(&[&o2, &o3, &o3]),
            UNLIMITED,
            vec![
                vec!["Replaced [ns/foo1 5, ns/foo2 5] at 123"],
                vec!["Updated ns/foo2 5", "Updated ns/foo3 5"],
                vec!["Updated ns/foo3 5"],
            ],
        ),
        (
            "a key of the initial list updated again",
            list(&[&o1, &o2, &o3]),
            list(&[&o2]),
            UNLIMITED,
            vec![
                vec!["Replaced [ns/foo1 5, ns/foo2 5, ns/foo3 5] at 123"],
                vec!["Updated ns/foo2 5"],
            ],
        ),
        (
            "the cap never splits the initial list",
            list(&[&o1, &o2, &o3]),
            vec![],
            2,
            vec![vec!["Replaced [ns/foo1 5, ns/foo2 5, ns/foo3 5] at 123"]],
        ),
        (
            "updates are cut at the cap; an empty initial list is an item",
            vec![],
            list(&[&o1, &o2, &o3]),
            2,
            vec![
                vec!["Replaced [] at 123"],
                vec!["Updated ns/foo1 5", "Updated ns/foo2 5"],
                vec!["Updated ns/foo3 5"],
            ],
        ),
        (
            "the initial list, then an update",
            list(&[&o1, &o2, &o3]),
            list(&[&o4]),
            2,
            vec![
                vec!["Replaced [ns/foo1 5, ns/foo2 5, ns/foo3 5] at 123"],
                vec!["Updated ns/foo4 5"],
            ],
        ),
    ];
    for (name, initial, updates, max, expected) in cases {
        let fifo = Fifo::default();
        fifo.replace(initial, "123".into()).unwrap();
        for update in updates {
            fifo.update(update).unwrap();
        }
        let popped = batches(&fifo, max).await;
        let items: Vec<Vec<String>> = popped.iter().map(|(items, _)| items.clone()).collect();
        let expected: Vec<Vec<String>> = expected.iter().map(|batch| strings(batch)).collect();
        assert_eq!(items, expected, "{name}");
        // Only the first batch, the initial list, is in the initial list.
        let initial: Vec<bool> = popped.iter().map(|(_, initial)| *initial).collect();
        assert!(initial[0], "{name}");
        assert!(initial[1..].iter().all(|initial| !initial), "{name}");
    }
}

#[tokio::test]
async fn objects_without_a_key_are_refused_and_never_reach_a_batch() {
    let unnamed = support::unnamed();
    let fifo = Fifo::default();
    fifo.add(obj("foo1", 5)).unwrap();
    assert!(fifo.add(Arc::clone(&unnamed)).is_err());
    fifo.add(obj("foo2", 5)).unwrap();
    assert!(fifo.update(Arc::clone(&unnamed)).is_err());
    assert!(
        fifo.replace(vec![obj("foo3", 5), unnamed], "1".into())
            .is_err()
    );
    let popped = batches(&fifo, 100).await;
    assert_eq!(popped.len(), 1);
    assert_eq!(
        popped[0].0,
        strings(&["Added ns/foo1 5", "Added ns/foo2 5"])
    );
}
