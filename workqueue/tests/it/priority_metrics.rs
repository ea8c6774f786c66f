//! The priority queue's metrics: `workqueue_depth` per priority (controller-runtime's
//! `priority` label), adds, retries, and the fallback to the plain hooks for a provider that
//! knows nothing of priorities.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use workqueue::{
    AddOptions, ItemExponentialFailure, MetricsProvider, Priority, PriorityQueue, QueueConfig,
    QueueMetrics,
};

const MS: Duration = Duration::from_millis(1);

/// Everything a named priority queue reported.
#[derive(Default)]
struct Recorded {
    /// `workqueue_depth` by priority.
    depth: BTreeMap<i32, i64>,
    adds: usize,
    retries: usize,
    /// `queued_for` of every get.
    queued_for: Vec<Duration>,
}

#[derive(Default)]
struct Recorder(Mutex<Recorded>);

impl QueueMetrics for Recorder {
    fn add_with_priority(&self, priority: Priority) {
        let mut recorded = self.0.lock();
        recorded.adds += 1;
        *recorded.depth.entry(priority.get()).or_default() += 1;
    }

    fn get_with_priority(&self, priority: Priority, queued_for: Duration) {
        let mut recorded = self.0.lock();
        *recorded.depth.entry(priority.get()).or_default() -= 1;
        recorded.queued_for.push(queued_for);
    }

    fn priority_raised(&self, from: Priority, to: Priority) {
        let mut recorded = self.0.lock();
        *recorded.depth.entry(from.get()).or_default() -= 1;
        *recorded.depth.entry(to.get()).or_default() += 1;
    }

    fn retry(&self) {
        self.0.lock().retries += 1;
    }
}

struct Provider(Arc<Recorder>);

impl MetricsProvider for Provider {
    fn queue_metrics(&self, _name: &str) -> Arc<dyn QueueMetrics> {
        self.0.clone()
    }
}

fn recorded_queue() -> (PriorityQueue<&'static str>, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let config = QueueConfig::new()
        .name("test")
        .metrics(Arc::new(Provider(Arc::clone(&recorder))));
    let limiter = ItemExponentialFailure::new(5 * MS, 1000 * MS);
    (PriorityQueue::with_config(limiter, config), recorder)
}

fn with(value: i32) -> AddOptions {
    match Priority::new(value) {
        Ok(priority) => AddOptions::new().priority(priority),
        Err(error) => panic!("{error}"),
    }
}

fn depth(recorder: &Recorder) -> Vec<(i32, i64)> {
    recorder
        .0
        .lock()
        .depth
        .iter()
        .map(|(&priority, &depth)| (priority, depth))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn depth_counts_ready_items_and_items_to_queue_again_per_priority() {
    let (queue, recorder) = recorded_queue();
    queue.add("foo");
    assert_eq!(queue.get().await, Some("foo"));
    // Re-added while in flight: counted, as in the plain queue.
    queue.add("foo");
    queue.add("bar");
    assert_eq!(queue.get().await, Some("bar"));
    assert_eq!(depth(&recorder), [(0, 1)]);
    assert_eq!(recorder.0.lock().adds, 3);
    queue.done(&"foo");
    assert_eq!(queue.get().await, Some("foo"));
    assert_eq!(depth(&recorder), [(0, 0)]);
}

#[tokio::test(start_paused = true)]
async fn a_raised_priority_moves_the_depth_without_an_add() {
    let (queue, recorder) = recorded_queue();
    queue.add("foo");
    queue.add("bar");
    queue.add("baz");
    queue.add_with("baz", with(1));
    queue.add_with("baz", with(1));
    assert_eq!(depth(&recorder), [(0, 2), (1, 1)]);
    assert_eq!(
        queue.get_with_priority().await.map(|(item, _)| item),
        Some("baz")
    );
    assert_eq!(depth(&recorder), [(0, 2), (1, 0)]);
    assert_eq!(recorder.0.lock().adds, 3);
}

#[tokio::test(start_paused = true)]
async fn waiting_items_count_once_they_are_ready() {
    let (queue, recorder) = recorded_queue();
    queue.add_after("foo", Duration::from_secs(60));
    queue.add("baz");
    queue.add_after("bar", 10 * MS);
    queue.add("bal");
    assert_eq!(depth(&recorder), [(0, 2)]);
    // A ready add of a waiting item, with a higher priority: ready now, counted at it.
    queue.add_with("foo", with(1));
    assert_eq!(depth(&recorder), [(0, 2), (1, 1)]);
    // Past the ready time of "bar" (the timer task and this test may wake in either order at
    // exactly 10 ms).
    tokio::time::sleep(11 * MS).await;
    assert_eq!(depth(&recorder), [(0, 3), (1, 1)]);
    for _ in 0..4 {
        assert!(queue.get().await.is_some());
    }
    assert_eq!(depth(&recorder), [(0, 0), (1, 0)]);
    // The three added at 0 ms waited 11 ms; "bar" is counted from its ready time (10 ms) on.
    let mut queued_for = recorder.0.lock().queued_for.clone();
    queued_for.sort();
    assert_eq!(queued_for, [MS, 11 * MS, 11 * MS, 11 * MS]);
}

#[tokio::test(start_paused = true)]
async fn retries_count_delayed_adds_and_asked_limiters_only() {
    let (queue, recorder) = recorded_queue();
    queue.add_after("a", Duration::ZERO);
    queue.add_after("b", 10 * MS);
    queue.add_after("b", 5 * MS);
    queue.add_rate_limited("c");
    // Already waiting: the limiter is not asked, no retry.
    queue.add_rate_limited("c");
    queue.add("d");
    assert_eq!(recorder.0.lock().retries, 4);
    queue.shut_down();
    queue.add_after("e", 10 * MS);
    queue.add_after("f", Duration::ZERO);
    queue.add_rate_limited("g");
    assert_eq!(recorder.0.lock().retries, 4);
}

#[tokio::test(start_paused = true)]
async fn a_provider_without_priorities_sees_plain_adds_and_gets() {
    use std::sync::atomic::{AtomicI64, Ordering};

    #[derive(Default)]
    struct Depth(AtomicI64);
    impl QueueMetrics for Depth {
        fn add(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn get(&self, _queued_for: Duration) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    struct Plain(Arc<Depth>);
    impl MetricsProvider for Plain {
        fn queue_metrics(&self, _name: &str) -> Arc<dyn QueueMetrics> {
            self.0.clone()
        }
    }

    let depth = Arc::new(Depth::default());
    let config = QueueConfig::new()
        .name("plain")
        .metrics(Arc::new(Plain(Arc::clone(&depth))));
    let queue = PriorityQueue::with_config(ItemExponentialFailure::new(MS, MS), config);
    queue.add(1);
    queue.add_with(2, with(-100));
    queue.add_with(2, with(5));
    assert_eq!(depth.0.load(Ordering::SeqCst), 2);
    assert_eq!(queue.get().await, Some(2));
    assert_eq!(depth.0.load(Ordering::SeqCst), 1);
}
