//! The rate-limiting queue's retries and backoff, with paused time.

use std::time::Duration;

use tokio::time::Instant;

use super::RateLimitingQueue;
use crate::rate_limiter::{ItemExponentialFailure, default_controller_rate_limiter};

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn retries_back_off_exponentially_until_forgotten() {
    let queue = RateLimitingQueue::new(ItemExponentialFailure::new(5 * MS, 1000 * MS));
    let mut last = Instant::now();
    for (failures, delay) in [(1, 5), (2, 10), (3, 20), (4, 40)] {
        queue.add_rate_limited("a");
        assert_eq!(queue.num_requeues(&"a"), failures);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(last.elapsed(), delay * MS);
        last = Instant::now();
        queue.done(&"a");
    }
    queue.forget(&"a");
    assert_eq!(queue.num_requeues(&"a"), 0);
    queue.add_rate_limited("a");
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(last.elapsed(), 5 * MS);
}

#[tokio::test(start_paused = true)]
async fn readd_while_waiting_for_backoff_counts_no_failure() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    let start = Instant::now();
    queue.add_rate_limited("a");
    // Spurious re-adds while "a" waits for its 5 ms backoff (kubernetes#132805).
    queue.add_rate_limited("a");
    queue.add_rate_limited("a");
    assert_eq!(queue.num_requeues(&"a"), 1);
    assert_eq!(queue.num_waiting(), 1);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 5 * MS);
    // Delivered: the next failure counts again.
    queue.add_rate_limited("a");
    assert_eq!(queue.num_requeues(&"a"), 2);
    queue.done(&"a");
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 15 * MS);
}

#[tokio::test(start_paused = true)]
async fn add_rate_limited_after_shut_down_counts_no_failure() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    queue.shut_down();
    queue.add_rate_limited("a");
    assert_eq!(queue.num_requeues(&"a"), 0);
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn plain_adds_and_delays_pass_through() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    queue.add("a");
    queue.add_after("b", 10 * MS);
    assert_eq!(queue.len(), 1);
    assert!(queue.is_waiting(&"b"));
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    queue.done(&"a");
    queue.done(&"b");
    queue.shut_down_with_drain().await;
    assert!(queue.is_shutting_down());
}
