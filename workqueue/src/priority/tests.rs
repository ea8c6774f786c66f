//! Tests of [`PriorityQueue`] that look inside it: adds that find its lock taken (held by the
//! test) are left in the inbox and keep every rule once moved in. Tests that need only the
//! public API are in `tests/it/priority*.rs`.

use std::time::Duration;

use super::PriorityQueue;
use crate::add_options::{AddOptions, Priority};
use crate::rate_limiter::ItemExponentialFailure;

const MS: Duration = Duration::from_millis(1);

fn queue() -> PriorityQueue<&'static str> {
    PriorityQueue::new(ItemExponentialFailure::new(MS, MS))
}

fn with(value: i32) -> AddOptions {
    match Priority::new(value) {
        Ok(priority) => AddOptions::new().priority(priority),
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test(start_paused = true)]
async fn adds_to_a_busy_queue_keep_priorities_dedup_and_the_waiting_rule() {
    let queue = queue();
    queue.add_with("waiting", with(2).after(Duration::from_secs(60)));
    queue.add("a");
    {
        let _busy = queue.inner.shared.state.lock();
        queue.add("b");
        queue.add("a");
        queue.add_with("b", with(1));
        queue.add_with("c", AddOptions::new().priority(Priority::LOW));
        // A ready add of a waiting item: ready now, with the higher of its priorities.
        queue.add("waiting");
    }
    assert_eq!(queue.len(), 4);
    assert_eq!(queue.num_waiting(), 0);
    let mut got = Vec::new();
    for _ in 0..4 {
        let taken = queue.get_with_priority().await;
        got.push(taken.map(|(item, priority)| (item, priority.get())));
    }
    let expected = [("waiting", 2), ("b", 1), ("a", 0), ("c", -100)].map(Some);
    assert_eq!(got, expected);
}

#[tokio::test(start_paused = true)]
async fn add_to_a_busy_queue_wakes_a_sleeping_worker() {
    let queue = queue();
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get_with_priority().await }
    });
    tokio::task::yield_now().await;
    {
        let _busy = queue.inner.shared.state.lock();
        queue.add_with("x", with(3));
    }
    let taken = worker.await.ok().flatten();
    assert_eq!(
        taken.map(|(item, priority)| (item, priority.get())),
        Some(("x", 3))
    );
}

#[tokio::test(start_paused = true)]
async fn add_to_a_busy_queue_before_shut_down_is_kept_and_after_is_dropped() {
    let queue = queue();
    {
        let _busy = queue.inner.shared.state.lock();
        queue.add_with("before", with(1));
    }
    queue.shut_down();
    queue.add("after");
    assert_eq!(queue.get().await, Some("before"));
    assert_eq!(queue.get().await, None);
}
