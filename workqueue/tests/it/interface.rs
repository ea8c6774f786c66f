//! The queue traits: code written once against `WorkQueue` … `PriorityWorkQueue` drives every
//! queue that implements them, with each queue's own rules (a generic worker loop; delays and
//! retries through the traits; priorities honoured by the priority queue and ignored by the
//! plain rate-limiting queue).

use std::time::Duration;

use tokio::time::Instant;
use workqueue::{
    AddOptions, DelayingQueue, DelayingWorkQueue, ItemExponentialFailure, Priority, PriorityQueue,
    PriorityWorkQueue, Queue, RateLimitingQueue, RateLimitingWorkQueue, WorkQueue,
};

const MS: Duration = Duration::from_millis(1);

/// Adds a, b, a; drains the queue with two workers written against the trait; returns what
/// the workers got, in order.
async fn two_workers_drain<Q: WorkQueue<Item = &'static str>>(queue: Q) -> Vec<&'static str> {
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assert_eq!(queue.len(), 2);
    let (got, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let queue = queue.clone();
            let got = got.clone();
            tokio::spawn(async move {
                while let Some(item) = queue.get().await {
                    let _ = got.send(item);
                    queue.done(&item);
                }
            })
        })
        .collect();
    drop(got);
    queue.shut_down_with_drain().await;
    assert!(queue.is_shutting_down());
    assert!(queue.is_empty());
    for worker in workers {
        assert!(worker.await.is_ok());
    }
    let mut items = Vec::new();
    while let Some(item) = seen.recv().await {
        items.push(item);
    }
    items
}

#[tokio::test(start_paused = true)]
async fn one_generic_worker_loop_drains_every_queue() {
    let limiter = || ItemExponentialFailure::new(5 * MS, 1000 * MS);
    assert_eq!(two_workers_drain(Queue::new()).await, ["a", "b"]);
    assert_eq!(two_workers_drain(DelayingQueue::new()).await, ["a", "b"]);
    assert_eq!(
        two_workers_drain(RateLimitingQueue::new(limiter())).await,
        ["a", "b"]
    );
    assert_eq!(
        two_workers_drain(PriorityQueue::new(limiter())).await,
        ["a", "b"]
    );
}

/// Adds `item` after 20 ms through the trait; returns how long its get waited.
async fn delivered_after<Q: DelayingWorkQueue<Item = &'static str>>(queue: Q) -> Duration {
    let start = Instant::now();
    queue.add_after("later", 20 * MS);
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.get().await, Some("later"));
    queue.done(&"later");
    start.elapsed()
}

#[tokio::test(start_paused = true)]
async fn add_after_through_the_trait_waits_in_every_delaying_queue() {
    let limiter = || ItemExponentialFailure::new(5 * MS, 1000 * MS);
    assert_eq!(delivered_after(DelayingQueue::new()).await, 20 * MS);
    assert_eq!(
        delivered_after(RateLimitingQueue::new(limiter())).await,
        20 * MS
    );
    assert_eq!(
        delivered_after(PriorityQueue::new(limiter())).await,
        20 * MS
    );
}

/// Fails `item` twice through the trait, then forgets it; returns the delays of the retries.
async fn retries<Q: RateLimitingWorkQueue<Item = &'static str>>(queue: Q) -> Vec<Duration> {
    let mut delays = Vec::new();
    for failures in 1..=2 {
        let start = Instant::now();
        queue.add_rate_limited("flaky");
        assert_eq!(queue.num_requeues(&"flaky"), failures);
        assert_eq!(queue.get().await, Some("flaky"));
        queue.done(&"flaky");
        delays.push(start.elapsed());
    }
    queue.forget(&"flaky");
    assert_eq!(queue.num_requeues(&"flaky"), 0);
    delays
}

#[tokio::test(start_paused = true)]
async fn rate_limited_retries_through_the_trait_back_off() {
    let limiter = || ItemExponentialFailure::new(5 * MS, 1000 * MS);
    let expected = [5 * MS, 10 * MS];
    assert_eq!(retries(RateLimitingQueue::new(limiter())).await, expected);
    assert_eq!(retries(PriorityQueue::new(limiter())).await, expected);
}

/// Queues two keys at low priority, then one at normal priority; returns the order of gets.
async fn order_of<Q: PriorityWorkQueue<Item = &'static str>>(
    queue: Q,
) -> Vec<(&'static str, Priority)> {
    for key in ["low-1", "low-2"] {
        queue.add_with(key, AddOptions::new().priority(Priority::LOW));
    }
    queue.add_with("normal", AddOptions::new());
    let mut order = Vec::new();
    for _ in 0..3 {
        if let Some((item, priority)) = queue.get_with_priority().await {
            queue.done(&item);
            order.push((item, priority));
        }
    }
    order
}

#[tokio::test(start_paused = true)]
async fn priorities_are_honoured_by_the_priority_queue_and_ignored_by_the_plain_one() {
    let limiter = || ItemExponentialFailure::new(5 * MS, 1000 * MS);
    assert_eq!(
        order_of(PriorityQueue::new(limiter())).await,
        [
            ("normal", Priority::NORMAL),
            ("low-1", Priority::LOW),
            ("low-2", Priority::LOW)
        ]
    );
    assert_eq!(
        order_of(RateLimitingQueue::new(limiter())).await,
        [
            ("low-1", Priority::NORMAL),
            ("low-2", Priority::NORMAL),
            ("normal", Priority::NORMAL)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_plain_queues_add_with_delays_and_retries_as_its_options_say() {
    let queue = RateLimitingQueue::new(ItemExponentialFailure::new(5 * MS, 1000 * MS));
    let start = Instant::now();
    queue.add_with(
        "later",
        AddOptions::new().priority(Priority::LOW).after(30 * MS),
    );
    queue.add_with("retry", AddOptions::new().rate_limited());
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.num_requeues(&"retry"), 1);
    assert_eq!(queue.get().await, Some("retry"));
    assert_eq!(start.elapsed(), 5 * MS);
    queue.done(&"retry");
    assert_eq!(queue.get().await, Some("later"));
    assert_eq!(start.elapsed(), 30 * MS);
    queue.done(&"later");
}

#[test]
fn add_options_report_what_they_were_given() {
    let options = AddOptions::new()
        .priority(Priority::LOW)
        .after(7 * MS)
        .rate_limited();
    assert_eq!(options.get_priority(), Priority::LOW);
    assert_eq!(options.delay(), Some(7 * MS));
    assert!(options.is_rate_limited());
    let plain = AddOptions::new();
    assert_eq!(plain.get_priority(), Priority::NORMAL);
    assert_eq!(plain.delay(), None);
    assert!(!plain.is_rate_limited());
}
