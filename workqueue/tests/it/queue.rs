//! The basic queue's guarantees through its public API: FIFO order, dedup while queued,
//! exclusive processing with a requeue on `done`, stray `done`s ignored, sleeping workers
//! woken, shutdown and drain.

use std::hash::Hash;

use tokio::task::JoinHandle;
use workqueue::Queue;

use crate::support::still_pending;

/// A worker task that has run up to its wait in `get`.
async fn waiting_worker<T>(queue: &Queue<T>) -> JoinHandle<Option<T>>
where
    T: Eq + Hash + Clone + Send + Sync + 'static,
{
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get().await }
    });
    tokio::task::yield_now().await;
    worker
}

/// A task that has shut `queue` down with drain and waits for the drain.
async fn draining<T>(queue: &Queue<T>) -> JoinHandle<()>
where
    T: Eq + Hash + Clone + Send + Sync + 'static,
{
    let drain = tokio::spawn({
        let queue = queue.clone();
        async move { queue.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    drain
}

#[tokio::test(start_paused = true)]
async fn hands_out_items_in_fifo_order() {
    let queue = Queue::new();
    for item in ["a", "b", "c"] {
        queue.add(item);
    }
    assert_eq!(queue.len(), 3);
    for expected in ["a", "b", "c"] {
        let item = queue.get().await;
        assert_eq!(item, Some(expected));
        queue.done(&expected);
    }
    assert!(queue.is_empty());
}

#[tokio::test(start_paused = true)]
async fn queued_item_is_stored_once() {
    let queue = Queue::new();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn item_in_flight_is_not_handed_out_again_until_done() {
    let queue = Queue::new();
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    queue.add("a");
    queue.add("a");
    // Dirty but held by a worker: not queued, so no second worker can get it.
    assert_eq!(queue.len(), 0);
    assert!(still_pending(queue.get()).await);
    queue.done(&"a");
    // Added while processing: queued again, exactly once, right after done.
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    assert!(queue.is_empty());
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn item_done_without_readd_is_not_requeued() {
    let queue = Queue::new();
    queue.add(1);
    assert_eq!(queue.get().await, Some(1));
    queue.done(&1);
    assert!(queue.is_empty());
    queue.add(1);
    assert_eq!(queue.get().await, Some(1));
}

#[tokio::test(start_paused = true)]
async fn stray_done_is_ignored() {
    let queue = Queue::new();
    // Unknown item.
    queue.done(&"x");
    // Queued, not in flight.
    queue.add("a");
    queue.done(&"a");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("a"));
    // In flight and dirty: the first done requeues, a second (stray) done must not
    // queue a duplicate (client-go bug, kubernetes PR #141079).
    queue.add("a");
    queue.done(&"a");
    queue.done(&"a");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    queue.done(&"a");
    assert!(queue.is_empty());
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn done_finds_any_in_flight_item_not_only_the_last_handed_out() {
    let queue = Queue::new();
    for item in ["a", "b", "c"] {
        queue.add(item);
    }
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    queue.add("a");
    // "b" was handed out last; "a" is found by lookup and queued again.
    queue.done(&"a");
    assert_eq!(queue.len(), 2);
    queue.done(&"b");
    queue.done(&"b");
    assert_eq!(queue.get().await, Some("c"));
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    // The node "a" used is free and then reused by "d", which is queued, not in flight:
    // neither a done for "d" nor one for "a" may release it.
    queue.add("d");
    queue.done(&"d");
    queue.done(&"a");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("d"));
    queue.done(&"d");
    queue.done(&"c");
    assert!(queue.is_empty());
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn sleeping_worker_is_woken_by_add() {
    let queue = Queue::new();
    let worker = waiting_worker(&queue).await;
    queue.add(7);
    assert_eq!(worker.await.ok(), Some(Some(7)));
}

#[tokio::test(start_paused = true)]
async fn sleeping_worker_is_woken_by_requeue_on_done() {
    let queue = Queue::new();
    queue.add(7);
    assert_eq!(queue.get().await, Some(7));
    queue.add(7);
    let worker = waiting_worker(&queue).await;
    queue.done(&7);
    assert_eq!(worker.await.ok(), Some(Some(7)));
}

#[tokio::test(start_paused = true)]
async fn many_sleeping_workers_each_get_one_item() {
    let queue = Queue::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let queue = queue.clone();
            tokio::spawn(async move { queue.get().await })
        })
        .collect();
    tokio::task::yield_now().await;
    for item in 0..4 {
        queue.add(item);
    }
    let mut got = Vec::new();
    for worker in workers {
        got.push(worker.await.ok().flatten());
    }
    got.sort();
    assert_eq!(got, vec![Some(0), Some(1), Some(2), Some(3)]);
}

#[tokio::test(start_paused = true)]
async fn after_shut_down_get_returns_what_is_queued_then_none() {
    let queue = Queue::new();
    queue.add("a");
    queue.add("b");
    queue.shut_down();
    assert!(queue.is_shutting_down());
    queue.add("c");
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    assert_eq!(queue.get().await, None);
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn add_while_processing_after_shut_down_is_dropped() {
    let queue = Queue::new();
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    queue.shut_down();
    queue.add("a");
    queue.done(&"a");
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn shut_down_wakes_sleeping_workers() {
    let queue: Queue<u32> = Queue::new();
    let worker = waiting_worker(&queue).await;
    queue.shut_down();
    assert_eq!(worker.await.ok(), Some(None));
}

#[tokio::test(start_paused = true)]
async fn drain_waits_for_queued_and_in_flight_items() {
    let queue = Queue::new();
    queue.add("a");
    queue.add("b");
    assert_eq!(queue.get().await, Some("a"));
    let drain = draining(&queue).await;
    assert!(queue.is_shutting_down());
    queue.add("c");
    queue.done(&"a");
    // Nothing in flight, but "b" is still queued: client-go would return here.
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    assert_eq!(queue.get().await, Some("b"));
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    queue.done(&"b");
    assert!(drain.await.is_ok());
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn drain_waits_for_item_requeued_on_done() {
    let queue = Queue::new();
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    queue.add("a");
    let drain = draining(&queue).await;
    queue.done(&"a");
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    assert!(drain.await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn drain_of_empty_queue_returns_at_once() {
    let queue: Queue<u8> = Queue::new();
    queue.shut_down_with_drain().await;
    assert!(queue.is_shutting_down());
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn shut_down_cuts_drain_short() {
    let queue = Queue::new();
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    let drain = draining(&queue).await;
    assert!(!drain.is_finished());
    queue.shut_down();
    assert!(drain.await.is_ok());
}
