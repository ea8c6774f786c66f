//! A delta fifo's batch pops and the resource version its consumer's cache is known to
//! reflect: a bookmark or a relist once every key queued before it has been processed, an add,
//! update or delete once the queue has run dry after it; never more than the cache holds.

use super::support;

use deltafifo::{DeltaFifo, Item};
use indexer::{Indexer, Indexers, Store};
use super::Obj;
use support::{apply, cm, describe_all, with_known};

type Fifo = DeltaFifo<Obj>;

/// Pops one key into `cache`; returns the resource version the fifo reports afterwards.
async fn pop_into(fifo: &Fifo, cache: &Indexer<Obj>) -> String {
    fifo.pop(|deltas, _| apply(cache, deltas)).await.unwrap();
    fifo.synced_resource_version()
}

/// Pops a batch of at most `max` keys; returns the keys and whether they are initial.
async fn batch(fifo: &Fifo, max: usize) -> (Vec<String>, bool) {
    fifo.pop_batch(max, |batch| {
        let keys = batch
            .items()
            .iter()
            .map(|item| match item {
                Item::Deltas(deltas) => deltas.key().to_string(),
                Item::Replaced(_) | Item::Resync => "not from a delta fifo".to_owned(),
            })
            .collect();
        (keys, batch.in_initial_list())
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_batch_takes_whole_keys_up_to_the_cap_and_never_past_the_initial_list() {
    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    fifo.replace(
        (1..=3).map(|i| cm("ns", &format!("a{i}"), i)).collect(),
        "3".into(),
    )
    .unwrap();
    fifo.update(cm("ns", "a1", 4)).unwrap();
    fifo.update(cm("ns", "b", 5)).unwrap();
    assert_eq!(
        batch(&fifo, 2).await,
        (vec!["ns/a1".into(), "ns/a2".into()], true)
    );
    assert!(!fifo.has_synced());
    // The initial list's last key comes alone, though more are queued.
    assert_eq!(batch(&fifo, 10).await, (vec!["ns/a3".into()], true));
    assert!(fifo.has_synced());
    // `a1`'s update joined its queued deltas, popped with the initial list.
    assert_eq!(batch(&fifo, 10).await, (vec!["ns/b".into()], false));
    // Each key's deltas come whole.
    fifo.add(cm("ns", "c", 6)).unwrap();
    fifo.update(cm("ns", "c", 7)).unwrap();
    let deltas = fifo
        .pop_batch(5, |batch| match batch.into_items().remove(0) {
            Item::Deltas(deltas) => describe_all(&deltas).len(),
            _ => 0,
        })
        .await
        .unwrap();
    assert_eq!(deltas, 2);
}

#[tokio::test]
async fn a_relist_is_reached_once_its_keys_are_processed() {
    let cache = Indexer::new(Indexers::new());
    cache.add(cm("ns", "gone", 1)).unwrap();
    let fifo = with_known(&cache);
    fifo.replace(vec![cm("ns", "a", 2), cm("ns", "b", 3)], "10".into())
        .unwrap();
    // Two listed keys and a tombstone.
    assert_eq!(pop_into(&fifo, &cache).await, "");
    assert_eq!(pop_into(&fifo, &cache).await, "");
    assert_eq!(pop_into(&fifo, &cache).await, "10");
    // An empty relist with nothing queued is reached at once.
    let empty = DeltaFifo::<Obj>::default();
    empty.replace(vec![], "4".into()).unwrap();
    assert_eq!(empty.synced_resource_version(), "4");
}

#[tokio::test]
async fn a_bookmark_is_reached_after_the_keys_queued_before_it() {
    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    fifo.update(cm("ns", "a", 1)).unwrap();
    fifo.update(cm("ns", "b", 2)).unwrap();
    fifo.bookmark("5".into());
    fifo.update(cm("ns", "c", 6)).unwrap();
    assert_eq!(pop_into(&fifo, &cache).await, "");
    assert_eq!(pop_into(&fifo, &cache).await, "5");
    // The queue ran dry after the newest change.
    assert_eq!(pop_into(&fifo, &cache).await, "6");
    // With nothing queued and nothing processed, a bookmark is reached at once.
    fifo.bookmark("9".into());
    assert_eq!(fifo.synced_resource_version(), "9");
    fifo.bookmark(String::new());
    assert_eq!(fifo.synced_resource_version(), "9");
}

/// A change merged into a key queued earlier is processed before keys queued after that key:
/// the fifo waits until the queue runs dry to claim it, and never claims a change whose key is
/// still queued.
#[tokio::test]
async fn a_change_is_claimed_only_once_everything_before_it_is_processed() {
    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    fifo.update(cm("ns", "a", 1)).unwrap();
    fifo.update(cm("ns", "b", 2)).unwrap();
    // The newest change goes to `a`, queued first: after `a` the cache holds it, not `b`'s.
    fifo.update(cm("ns", "a", 3)).unwrap();
    assert_eq!(pop_into(&fifo, &cache).await, "");
    assert_eq!(pop_into(&fifo, &cache).await, "3");
    // Changes after a bookmark are claimed after it, never before.
    fifo.update(cm("ns", "c", 4)).unwrap();
    fifo.bookmark("5".into());
    fifo.update(cm("ns", "c", 6)).unwrap();
    assert_eq!(pop_into(&fifo, &cache).await, "6");
}

#[tokio::test]
async fn a_relist_in_pages_is_reached_once_finished_and_processed() {
    let cache = Indexer::new(Indexers::new());
    let fifo = with_known(&cache);
    let mut paged = fifo.replace_in_pages();
    paged.page(vec![cm("ns", "a", 1)]).unwrap();
    assert_eq!(pop_into(&fifo, &cache).await, "");
    paged.page(vec![cm("ns", "b", 2)]).unwrap();
    paged.finish("7".into()).unwrap();
    assert_eq!(pop_into(&fifo, &cache).await, "7");
    // A relist after which nothing is queued is reached at once.
    let mut paged = fifo.replace_in_pages();
    paged.page(vec![]).unwrap();
    drop(paged);
    assert_eq!(
        fifo.synced_resource_version(),
        "7",
        "an abandoned relist claims nothing"
    );
}
