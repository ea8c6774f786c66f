//! Resyncs as one item, reaching the consumer's cache as it is then.

use super::*;

use support::show_item;

#[tokio::test]
async fn a_resync_re_delivers_what_the_cache_holds_when_it_is_reached() {
    // `ResyncNonExisting`: the object is deleted before the resync is reached.
    let cache = known(&[obj("foo", 5)]);
    let fifo = Fifo::default();
    fifo.delete(obj("foo", 10)).unwrap();
    fifo.resync().unwrap();
    assert_eq!(fifo.len(), 2);
    assert_eq!(
        drain_into(&fifo, &cache).await,
        strings(&["Deleted ns/foo 10"])
    );

    // `Resync`: a known object is synced.
    let cache = known(&[obj("foo", 5)]);
    let fifo = Fifo::default();
    fifo.resync().unwrap();
    assert_eq!(drain_into(&fifo, &cache).await, strings(&["Sync ns/foo 5"]));
}

#[tokio::test]
async fn a_resync_after_an_update_re_delivers_the_update() {
    let cache = known(&[obj("foo", 5)]);
    let fifo = Fifo::default();
    fifo.update(obj("foo", 6)).unwrap();
    fifo.resync().unwrap();
    assert_eq!(
        drain_into(&fifo, &cache).await,
        strings(&["Updated ns/foo 6", "Sync ns/foo 6"])
    );
}

#[tokio::test]
async fn an_atomic_resync_is_one_item_after_what_came_before() {
    let fifo = Fifo::default();
    fifo.resync().unwrap();
    assert_eq!(show_item(&pop(&fifo).await.0), "Resync");
    assert!(fifo.is_empty());

    let fifo = Fifo::default();
    fifo.add(obj("foo", 2)).unwrap();
    fifo.resync().unwrap();
    assert_eq!(show_item(&pop(&fifo).await.0), "Added ns/foo 2");
    assert_eq!(show_item(&pop(&fifo).await.0), "Resync");
    assert!(fifo.is_empty());
}
