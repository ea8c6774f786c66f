//! Relists, whole and as one item, and the deletions the consumer works out.

use super::*;

use support::show_item;

#[tokio::test]
async fn a_relist_after_a_queued_delete_delivers_the_object_again() {
    let cache = known(&[obj("foo", 1)]);
    let fifo = Fifo::default();
    fifo.delete(obj("foo", 1)).unwrap();
    fifo.replace(vec![obj("foo", 2)], String::new()).unwrap();
    assert_eq!(
        drain_into(&fifo, &cache).await,
        strings(&["Deleted ns/foo 1", "Replaced ns/foo 2"])
    );
}

#[tokio::test]
async fn relists_delete_what_only_the_queue_held() {
    let (v2, v3) = (obj("foo", 2), obj("foo", 3));
    let cases: Vec<(&str, Operations, Vec<&str>)> = vec![
        (
            "an added object is deleted by a relist",
            Box::new(|f| {
                f.add(v2.clone()).unwrap();
                f.replace(vec![], "0".into()).unwrap();
            }),
            vec!["Added ns/foo 2", "Deleted ns/foo 2 tombstone"],
        ),
        (
            "a deleted object gets a single delete",
            Box::new(|f| {
                f.add(v2.clone()).unwrap();
                f.delete(v2.clone()).unwrap();
                f.replace(vec![], "0".into()).unwrap();
            }),
            vec!["Added ns/foo 2", "Deleted ns/foo 2"],
        ),
        (
            "a relisted object gets a single delete",
            Box::new(|f| {
                f.add(v2.clone()).unwrap();
                f.replace(vec![v2.clone()], "0".into()).unwrap();
                f.replace(vec![v2.clone()], "0".into()).unwrap();
                f.replace(vec![], "0".into()).unwrap();
            }),
            vec![
                "Added ns/foo 2",
                "Replaced ns/foo 2",
                "Replaced ns/foo 2",
                "Deleted ns/foo 2 tombstone",
            ],
        ),
        (
            "an added object gets a single delete over two relists",
            Box::new(|f| {
                f.add(v2.clone()).unwrap();
                f.replace(vec![], "0".into()).unwrap();
                f.replace(vec![], "1".into()).unwrap();
            }),
            vec!["Added ns/foo 2", "Deleted ns/foo 2 tombstone"],
        ),
        (
            "added, deleted and added again, then deleted by a relist",
            Box::new(|f| {
                f.add(v2.clone()).unwrap();
                f.delete(v2.clone()).unwrap();
                f.add(v3.clone()).unwrap();
                f.replace(vec![], "0".into()).unwrap();
            }),
            vec![
                "Added ns/foo 2",
                "Deleted ns/foo 2",
                "Added ns/foo 3",
                "Deleted ns/foo 3 tombstone",
            ],
        ),
        (
            "a bookmark is not handed to the consumer",
            Box::new(|f| {
                f.bookmark("123".into());
                f.replace(vec![], "0".into()).unwrap();
                f.replace(vec![], "1".into()).unwrap();
            }),
            vec![],
        ),
    ];
    for (name, operations, expected) in cases {
        let fifo = Fifo::default();
        let cache = known(&[]);
        operations(&fifo);
        assert_eq!(
            drain_into(&fifo, &cache).await,
            strings(&expected),
            "{name}"
        );
        assert!(fifo.is_empty(), "{name}");
    }
}

#[tokio::test]
async fn an_add_then_a_relist_pop_in_order() {
    let fifo = Fifo::default();
    fifo.add(obj("foo", 10)).unwrap();
    fifo.replace(vec![obj("foo", 15)], "20".into()).unwrap();
    assert_eq!(show_item(&pop(&fifo).await.0), "Added ns/foo 10");
    assert_eq!(show_item(&pop(&fifo).await.0), "Replaced [ns/foo 15] at 20");
    assert!(fifo.is_empty());
    assert!(fifo.snapshot().is_empty());
}

#[tokio::test]
async fn relists_tombstone_what_vanished() {
    let initial = [obj("foo", 5), obj("bar", 6), obj("baz", 7)];
    let cases: Vec<(&str, Operations, Vec<&str>)> = vec![
        (
            "a queued delete, then a relist",
            Box::new(|f| {
                f.delete(obj("baz", 10)).unwrap();
                f.replace(vec![obj("foo", 5)], "0".into()).unwrap();
            }),
            vec![
                "Deleted ns/baz 10",
                "Deleted ns/bar 6 tombstone",
                "Replaced ns/foo 5",
            ],
        ),
        (
            // `ReplaceMakesDeletionsReplaced`: the same with a changed object.
            "a queued delete, then a relist with a change",
            Box::new(|f| {
                f.delete(obj("baz", 10)).unwrap();
                f.replace(vec![obj("foo", 6)], "0".into()).unwrap();
            }),
            vec![
                "Deleted ns/baz 10",
                "Deleted ns/bar 6 tombstone",
                "Replaced ns/foo 6",
            ],
        ),
        (
            // client-go: baz's tombstone before bar's (queued keys first).
            "a queued add, then a relist",
            Box::new(|f| {
                f.add(obj("baz", 10)).unwrap();
                f.replace(vec![obj("foo", 5)], "0".into()).unwrap();
            }),
            vec![
                "Added ns/baz 10",
                "Deleted ns/bar 6 tombstone",
                "Deleted ns/baz 10 tombstone",
                "Replaced ns/foo 5",
            ],
        ),
        (
            "deleted and recreated in the queue, then deleted by a relist",
            Box::new(|f| {
                f.delete(obj("bar", 6)).unwrap();
                f.add(obj("bar", 100)).unwrap();
                f.replace(vec![obj("foo", 5)], "0".into()).unwrap();
            }),
            vec![
                "Deleted ns/bar 6",
                "Added ns/bar 100",
                "Deleted ns/bar 100 tombstone",
                "Deleted ns/baz 7 tombstone",
                "Replaced ns/foo 5",
            ],
        ),
        (
            "relisted with a newer state, then deleted by a relist",
            Box::new(|f| {
                f.replace(vec![obj("bar", 100), obj("foo", 5)], "0".into())
                    .unwrap();
                f.replace(vec![obj("foo", 5)], "0".into()).unwrap();
            }),
            vec![
                "Deleted ns/baz 7 tombstone",
                "Replaced ns/bar 100",
                "Replaced ns/foo 5",
                "Deleted ns/bar 100 tombstone",
                "Replaced ns/foo 5",
            ],
        ),
    ];
    for (name, operations, expected) in cases {
        let fifo = Fifo::default();
        let cache = known(&initial);
        operations(&fifo);
        assert_eq!(
            drain_into(&fifo, &cache).await,
            strings(&expected),
            "{name}"
        );
    }
    // Without known objects: only the queued add is tombstoned.
    let fifo = Fifo::default();
    let cache = known(&[]);
    fifo.add(obj("baz", 10)).unwrap();
    fifo.replace(vec![obj("foo", 5)], "0".into()).unwrap();
    assert_eq!(
        drain_into(&fifo, &cache).await,
        strings(&[
            "Added ns/baz 10",
            "Deleted ns/baz 10 tombstone",
            "Replaced ns/foo 5"
        ])
    );
}

#[tokio::test]
async fn atomic_relists_queue_one_item_each_in_order() {
    let foo = obj("foo", 2);
    let cases: Vec<(&str, Operations, Vec<&str>, &str)> = vec![
        (
            "a relist",
            Box::new(|f| f.replace(vec![], "123".into()).unwrap()),
            vec!["Replaced [] at 123"],
            "123",
        ),
        (
            "an add stays before a relist",
            Box::new(|f| {
                f.add(foo.clone()).unwrap();
                f.replace(vec![], "123".into()).unwrap();
            }),
            vec!["Added ns/foo 2", "Replaced [] at 123"],
            "123",
        ),
        (
            "relists run in order",
            Box::new(|f| {
                f.add(foo.clone()).unwrap();
                f.replace(vec![foo.clone()], "10".into()).unwrap();
                f.replace(vec![foo.clone()], "20".into()).unwrap();
                f.replace(vec![], "56".into()).unwrap();
            }),
            vec![
                "Added ns/foo 2",
                "Replaced [ns/foo 2] at 10",
                "Replaced [ns/foo 2] at 20",
                "Replaced [] at 56",
            ],
            "56",
        ),
        (
            "a bookmark is not part of a relist",
            Box::new(|f| {
                f.bookmark("123".into());
                f.replace(vec![], "1234".into()).unwrap();
            }),
            vec!["Replaced [] at 1234"],
            "1234",
        ),
    ];
    for (name, operations, expected, synced_at) in cases {
        let fifo = Fifo::default();
        operations(&fifo);
        let mut popped = Vec::new();
        while !fifo.is_empty() {
            popped.push(show_item(&pop(&fifo).await.0));
        }
        assert_eq!(popped, strings(&expected), "{name}");
        assert_eq!(fifo.synced_resource_version(), synced_at, "{name}");
    }
}
