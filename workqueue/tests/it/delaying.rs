//! The delaying queue through its public API: items delivered when their delay has passed, in
//! ready order, a waiting item keeping the earlier ready time, waiting independent of queued,
//! shutdown discarding what waits, the timer task's life, and the retry metric.

use std::time::Duration;

use tokio::time::Instant;
use workqueue::DelayingQueue;

use crate::support::still_pending;

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn zero_delay_adds_at_once() {
    let queue = DelayingQueue::new();
    queue.add_after("a", Duration::ZERO);
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.num_waiting(), 0);
    assert_eq!(queue.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn item_is_delivered_when_its_delay_has_passed() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("a", 50 * MS);
    assert!(queue.is_waiting(&"a"));
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 50 * MS);
    assert!(!queue.is_waiting(&"a"));
}

#[tokio::test(start_paused = true)]
async fn items_are_delivered_in_ready_order() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after(3, 30 * MS);
    queue.add_after(1, 10 * MS);
    queue.add_after(2, 20 * MS);
    for (item, at) in [(1, 10), (2, 20), (3, 30)] {
        assert_eq!(queue.get().await, Some(item));
        assert_eq!(start.elapsed(), at * MS);
        queue.done(&item);
    }
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn waiting_item_keeps_the_earlier_ready_time() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("late-first", 100 * MS);
    queue.add_after("late-first", 10 * MS);
    queue.add_after("early-first", 20 * MS);
    queue.add_after("early-first", 200 * MS);
    assert_eq!(queue.num_waiting(), 2);
    assert_eq!(queue.get().await, Some("late-first"));
    assert_eq!(start.elapsed(), 10 * MS);
    queue.done(&"late-first");
    assert_eq!(queue.get().await, Some("early-first"));
    assert_eq!(start.elapsed(), 20 * MS);
    queue.done(&"early-first");
    // The superseded entries (100 ms, 200 ms) deliver nothing.
    assert!(still_pending(queue.get()).await);
    assert_eq!(queue.num_waiting(), 0);
}

#[tokio::test(start_paused = true)]
async fn waiting_and_queued_are_independent() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 10 * MS);
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    // Still waiting: delivered again when due.
    assert!(queue.is_waiting(&"a"));
    assert_eq!(queue.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn shut_down_discards_waiting_items() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 10 * MS);
    queue.add("b");
    queue.shut_down();
    queue.add_after("c", 10 * MS);
    queue.add_after("d", Duration::ZERO);
    assert_eq!(queue.num_waiting(), 0);
    tokio::time::sleep(20 * MS).await;
    assert_eq!(queue.get().await, Some("b"));
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn drain_discards_waiting_items() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 10 * MS);
    queue.shut_down_with_drain().await;
    assert_eq!(queue.get().await, None);
}

#[test]
fn built_outside_a_runtime_delivers_once_used_from_one() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 10 * MS);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build();
    let Ok(runtime) = runtime else {
        panic!("no runtime");
    };
    let got = runtime.block_on(queue.get());
    assert_eq!(got, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn timer_task_ends_when_the_queue_is_dropped_or_shut_down() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let baseline = metrics.num_alive_tasks();

    let queue = DelayingQueue::new();
    queue.add_after(1, Duration::from_secs(3600));
    tokio::task::yield_now().await;
    assert_eq!(metrics.num_alive_tasks(), baseline + 1);
    drop(queue);
    tokio::time::sleep(MS).await;
    assert_eq!(metrics.num_alive_tasks(), baseline);

    let queue = DelayingQueue::new();
    queue.add_after(1, Duration::from_secs(3600));
    tokio::task::yield_now().await;
    assert_eq!(metrics.num_alive_tasks(), baseline + 1);
    queue.shut_down();
    tokio::time::sleep(MS).await;
    assert_eq!(metrics.num_alive_tasks(), baseline);
}

#[tokio::test(start_paused = true)]
async fn equal_ready_times_keep_insertion_order() {
    let queue = DelayingQueue::new();
    for item in [5, 3, 9, 1] {
        queue.add_after(item, 10 * MS);
    }
    for expected in [5, 3, 9, 1] {
        assert_eq!(queue.get().await, Some(expected));
    }
}

#[tokio::test(start_paused = true)]
async fn superseded_entry_never_delivers_a_later_add() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("a", 100 * MS);
    queue.add_after("a", 10 * MS);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 10 * MS);
    queue.done(&"a");
    // Waits again, due exactly when the superseded 100 ms entry surfaces.
    queue.add_after("a", 90 * MS);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 100 * MS);
    queue.done(&"a");
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn every_add_after_counts_a_retry() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use workqueue::{MetricsProvider, QueueConfig, QueueMetrics};

    #[derive(Default)]
    struct Retries(AtomicUsize);
    impl QueueMetrics for Retries {
        fn retry(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    struct Provider(Arc<Retries>);
    impl MetricsProvider for Provider {
        fn queue_metrics(&self, _name: &str) -> Arc<dyn QueueMetrics> {
            self.0.clone()
        }
    }

    let retries = Arc::new(Retries::default());
    let queue = DelayingQueue::with_config(
        QueueConfig::new()
            .name("retries")
            .metrics(Arc::new(Provider(retries.clone()))),
    );
    queue.add_after("a", Duration::ZERO);
    queue.add_after("b", 10 * MS);
    queue.add_after("b", 5 * MS);
    queue.add("c");
    assert_eq!(retries.0.load(Ordering::SeqCst), 3);
    queue.shut_down();
    queue.add_after("d", 10 * MS);
    queue.add_after("e", Duration::ZERO);
    assert_eq!(retries.0.load(Ordering::SeqCst), 3);
}

#[test]
fn handles_are_cheap_shareable_values() {
    fn shareable<Q: Clone + Send + Sync + 'static>() {}
    shareable::<DelayingQueue<String>>();
    shareable::<workqueue::Queue<String>>();
    shareable::<workqueue::RateLimitingQueue<String>>();
}

#[tokio::test(start_paused = true)]
async fn huge_delay_does_not_overflow() {
    let queue = DelayingQueue::new();
    queue.add_after("a", Duration::MAX);
    assert!(queue.is_waiting(&"a"));
    assert!(still_pending(queue.get()).await);
}
