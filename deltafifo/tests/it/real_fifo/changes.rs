//! Adds, updates and deletes: order, keys, transforms.

use super::*;

use deltafifo::{Error, InOrderFifoOptions};
use support::{key, rv_of, show_item};

/// How often the transform has seen an object, recorded in an annotation.
fn transformations(obj: &Obj) -> u32 {
    obj.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get("xfrm"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_producers_each_keep_their_order() {
    const AMOUNT: u64 = 500;
    let fifo = Fifo::default();
    let producers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|prefix| {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                for i in 0..AMOUNT {
                    fifo.add(obj(&format!("{prefix}-{i}"), i + 1)).unwrap();
                }
            })
        })
        .collect();
    let mut last = [0, 0];
    for _ in 0..2 * AMOUNT {
        let (item, _) = pop(&fifo).await;
        let Item::Deltas(deltas) = item else {
            panic!("only adds were queued");
        };
        let producer = usize::from(deltas.key().name().starts_with("b-"));
        let rv = rv_of(deltas.newest().object().unwrap());
        assert!(rv > last[producer], "{rv} after {}", last[producer]);
        last[producer] = rv;
    }
    for producer in producers {
        producer.join().unwrap();
    }
    assert_eq!(last, [AMOUNT, AMOUNT]);
}

#[tokio::test]
async fn adds_updates_and_deletes_of_one_key_all_arrive() {
    let fifo = Fifo::default();
    fifo.add(obj("foo", 10)).unwrap();
    fifo.update(obj("foo", 12)).unwrap();
    fifo.delete(obj("foo", 15)).unwrap();
    let queued: Vec<String> = fifo.snapshot().iter().map(show_item).collect();
    assert_eq!(
        queued,
        strings(&["Added ns/foo 10", "Updated ns/foo 12", "Deleted ns/foo 15"])
    );
    for expected in ["Added ns/foo 10", "Updated ns/foo 12", "Deleted ns/foo 15"] {
        assert_eq!(show_item(&pop(&fifo).await.0), expected);
    }
    assert!(fifo.is_empty());
    fifo.close();
    assert_eq!(fifo.pop_batch(1, |_| ()).await, Err(Error::Closed));
}

#[tokio::test]
async fn objects_are_transformed_once_tombstones_never() {
    let fifo: Fifo =
        InOrderFifo::new(InOrderFifoOptions::new().transform(|obj: Arc<Obj>| {
            let seen = transformations(&obj);
            let mut obj = Arc::unwrap_or_clone(obj);
            obj.meta_mut()
                .annotations
                .get_or_insert_default()
                .insert("xfrm".into(), (seen + 1).to_string());
            Ok(Arc::new(obj))
        }));
    fifo.add(obj("foo", 10)).unwrap();
    fifo.add(obj("bar", 11)).unwrap();
    fifo.update(obj("foo", 12)).unwrap();
    fifo.delete(obj("foo", 15)).unwrap();
    fifo.replace(vec![], String::new()).unwrap();
    fifo.add(obj("bar", 16)).unwrap();
    fifo.replace(vec![], String::new()).unwrap();

    let cache = known(&[]);
    let mut seen = Vec::new();
    while !fifo.is_empty() {
        let (item, _) = pop(&fifo).await;
        for (key, delta) in support::expand(&cache, item) {
            let object = delta.object().expect("every change here carries an object");
            assert_eq!(
                transformations(object),
                1,
                "{}",
                support::show(&key, &delta)
            );
            seen.push(support::show(&key, &delta));
            support::apply_one(&cache, &key, delta);
        }
    }
    assert_eq!(
        seen,
        strings(&[
            "Added ns/foo 10",
            "Added ns/bar 11",
            "Updated ns/foo 12",
            "Deleted ns/foo 15",
            "Deleted ns/bar 11 tombstone",
            "Added ns/bar 16",
            "Deleted ns/bar 16 tombstone",
        ])
    );
}

#[tokio::test]
async fn every_delete_is_queued_whatever_the_consumer_knows() {
    // Without known objects (`enqueueingNoLister`) and with them (`enqueueingWithLister`): the
    // fifo never reads the consumer's cache, so both queue every change.
    let fifo = Fifo::default();
    fifo.add(obj("foo", 10)).unwrap();
    fifo.update(obj("bar", 15)).unwrap();
    fifo.add(obj("qux", 17)).unwrap();
    fifo.delete(obj("qux", 18)).unwrap();
    fifo.delete(obj("baz", 20)).unwrap();
    let mut rvs = Vec::new();
    while !fifo.is_empty() {
        if let (Item::Deltas(deltas), _) = pop(&fifo).await {
            rvs.push(rv_of(deltas.newest().object().unwrap()));
        }
    }
    assert_eq!(rvs, [10, 15, 17, 18, 20]);
}

#[tokio::test]
async fn a_delete_after_an_add_is_queued() {
    let fifo = Fifo::default();
    fifo.add(obj("foo", 5)).unwrap();
    fifo.delete(obj("foo", 6)).unwrap();
    let queued = fifo.snapshot();
    assert_eq!(queued.len(), 2);
    assert_eq!(show_item(&queued[1]), "Deleted ns/foo 6");
}

#[tokio::test]
async fn no_key_jumps_the_line() {
    let fifo = Fifo::default();
    fifo.add(obj("foo", 10)).unwrap();
    fifo.add(obj("bar", 1)).unwrap();
    fifo.add(obj("foo", 11)).unwrap();
    fifo.add(obj("foo", 13)).unwrap();
    fifo.add(obj("zab", 30)).unwrap();
    assert_eq!(show_item(&pop(&fifo).await.0), "Added ns/foo 10");
    // foo does not jump back in line.
    fifo.add(obj("foo", 14)).unwrap();
    for expected in [
        "Added ns/bar 1",
        "Added ns/foo 11",
        "Added ns/foo 13",
        "Added ns/zab 30",
        "Added ns/foo 14",
    ] {
        assert_eq!(show_item(&pop(&fifo).await.0), expected);
    }
}

#[tokio::test]
async fn every_item_carries_the_key_computed_at_write() {
    // Longer than a key's inline capacity: a key computed again would have a buffer of its own.
    let name = "an-object-with-a-rather-long-name";
    let fifo = Fifo::default();
    fifo.add(obj(name, 1)).unwrap();
    let queued = fifo.list_keys();
    let (item, _) = pop(&fifo).await;
    let Item::Deltas(deltas) = item else {
        panic!("an add was queued");
    };
    assert_eq!(deltas.key(), &key(&format!("ns/{name}")));
    assert!(deltas.key().shares_text(&queued[0]));
    // A tombstone's key is that of the cache entry it stands for.
    let cache = known(&[obj(name, 1)]);
    fifo.replace(vec![], "2".into()).unwrap();
    let (Item::Replaced(list), _) = pop(&fifo).await else {
        panic!("a relist was queued");
    };
    let tombstones = list.deletions(&cache);
    assert_eq!(tombstones.len(), 1);
    assert!(tombstones[0].key.shares_text(&cache.list_keys()[0]));
}
