//! Tests of [`Queue`] that look inside it (the sleeping-worker count, a lock held by the test
//! to make adds find the queue busy, the metrics hook), and the metrics tests, which share one
//! recording provider. Tests that need only the public API are in `tests/it/queue.rs`.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::Queue;
use crate::config::QueueConfig;
use crate::metrics::{MetricsProvider, QueueMetrics};

/// Whether `future` is still pending after the runtime has run every other task.
async fn still_pending<F: std::future::Future>(future: F) -> bool {
    tokio::time::timeout(Duration::from_secs(3600), future)
        .await
        .is_err()
}

/// Spawns a worker waiting in `get`, and lets it run until it sleeps.
async fn sleeping_worker<T>(queue: &Queue<T>) -> tokio::task::JoinHandle<Option<T>>
where
    T: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
{
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get().await }
    });
    tokio::task::yield_now().await;
    worker
}

#[tokio::test(start_paused = true)]
async fn cancelled_get_loses_nothing() {
    let queue = Queue::new();
    assert!(still_pending(queue.get()).await);
    assert!(still_pending(queue.get()).await);
    queue.add(1);
    assert_eq!(queue.get().await, Some(1));
    // Every cancelled sleeper deregistered.
    assert_eq!(queue.shared.sleepers.count(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_wake_up_claims_its_sleeper_so_later_adds_do_not_wake_it_again() {
    let queue = Queue::new();
    let worker = sleeping_worker(&queue).await;
    assert_eq!(queue.shared.sleepers.count(), 1);
    queue.add(1);
    // Claimed by the first add before it runs: the adds after it find no one left to wake.
    assert_eq!(queue.shared.sleepers.count(), 0);
    queue.add(2);
    queue.add(3);
    assert_eq!(worker.await.ok(), Some(Some(1)));
    assert_eq!(queue.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_get_passes_on_the_wake_up_that_claimed_it() {
    let queue = Queue::new();
    let first = sleeping_worker(&queue).await;
    let second = sleeping_worker(&queue).await;
    assert_eq!(queue.shared.sleepers.count(), 2);
    // The add claims the first sleeper, which is cancelled before it runs: the second gets it.
    queue.add(1);
    first.abort();
    assert!(first.await.is_err());
    // With the clock paused, a lost wake-up shows as the hour running out at once.
    let second = tokio::time::timeout(Duration::from_secs(3600), second).await;
    assert_eq!(second.ok().and_then(Result::ok), Some(Some(1)));
    assert_eq!(queue.shared.sleepers.count(), 0);
}

#[tokio::test(start_paused = true)]
async fn add_to_a_busy_queue_is_kept_in_order_and_deduplicated() {
    let queue = Queue::new();
    queue.add("a");
    {
        let _busy = queue.shared.state.lock();
        queue.add("b");
        queue.add("a");
        queue.add("b");
        queue.add("c");
    }
    assert_eq!(queue.len(), 3);
    for expected in ["a", "b", "c"] {
        assert_eq!(queue.get().await, Some(expected));
    }
    // Added to a busy queue while processing: queued again on done.
    {
        let _busy = queue.shared.state.lock();
        queue.add("a");
    }
    queue.done(&"a");
    assert_eq!(queue.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn add_to_a_busy_queue_wakes_a_sleeping_worker() {
    let queue = Queue::new();
    let worker = sleeping_worker(&queue).await;
    {
        let _busy = queue.shared.state.lock();
        queue.add(7);
    }
    assert_eq!(worker.await.ok(), Some(Some(7)));
}

#[tokio::test(start_paused = true)]
async fn add_to_a_busy_queue_before_shut_down_is_kept_and_after_is_dropped() {
    let queue = Queue::new();
    {
        let _busy = queue.shared.state.lock();
        queue.add(1);
    }
    queue.shut_down();
    {
        let _busy = queue.shared.state.lock();
        queue.add(2);
    }
    assert_eq!(queue.get().await, Some(1));
    assert_eq!(queue.get().await, None);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    Add,
    Get(Duration),
    Done(Duration),
    Unfinished(Duration, Duration),
}

#[derive(Default)]
struct Recorder {
    names: Mutex<Vec<String>>,
    events: Arc<Mutex<Vec<Event>>>,
}

struct Sink(Arc<Mutex<Vec<Event>>>);

impl QueueMetrics for Sink {
    fn add(&self) {
        self.0.lock().push(Event::Add);
    }
    fn get(&self, queued_for: Duration) {
        self.0.lock().push(Event::Get(queued_for));
    }
    fn done(&self, worked_for: Duration) {
        self.0.lock().push(Event::Done(worked_for));
    }
    fn update_unfinished(&self, unfinished_work: Duration, longest_running: Duration) {
        self.0
            .lock()
            .push(Event::Unfinished(unfinished_work, longest_running));
    }
}

impl MetricsProvider for Recorder {
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
        self.names.lock().push(name.to_string());
        Arc::new(Sink(Arc::clone(&self.events)))
    }
}

#[tokio::test(start_paused = true)]
async fn unnamed_queue_has_no_metrics() {
    let recorder = Arc::new(Recorder::default());
    let queue = Queue::with_config(QueueConfig::new().metrics(recorder.clone()));
    queue.add(1);
    assert_eq!(queue.get().await, Some(1));
    queue.done(&1);
    assert!(recorder.names.lock().is_empty());
    assert!(recorder.events.lock().is_empty());
    assert!(queue.shared.metrics.is_none());
    assert!(!queue.shared.state.lock().store.is_timed());
}

#[tokio::test(start_paused = true)]
async fn refresh_task_ends_once_shut_down_and_drained() {
    let runtime = tokio::runtime::Handle::current().metrics();
    let baseline = runtime.num_alive_tasks();
    let recorder = Arc::new(Recorder::default());
    let queue = Queue::with_config(QueueConfig::new().name("q").metrics(recorder.clone()));
    tokio::task::yield_now().await;
    assert_eq!(runtime.num_alive_tasks(), baseline + 1);
    queue.add(1);
    assert_eq!(queue.get().await, Some(1));
    queue.shut_down();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Still reporting: an item is in flight.
    assert_eq!(runtime.num_alive_tasks(), baseline + 1);
    queue.done(&1);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(runtime.num_alive_tasks(), baseline);
    assert!(recorder.events.lock().contains(&Event::Unfinished(
        Duration::from_millis(1500),
        Duration::from_millis(1500)
    )));
}

#[tokio::test(start_paused = true)]
async fn named_queue_reports_adds_latencies_and_unfinished_work() {
    let recorder = Arc::new(Recorder::default());
    let queue = Queue::with_config(QueueConfig::new().name("foos").metrics(recorder.clone()));
    assert_eq!(queue.name(), Some("foos"));
    assert_eq!(*recorder.names.lock(), vec!["foos".to_string()]);

    queue.add("a");
    queue.add("a"); // deduplicated: not an add
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(queue.get().await, Some("a"));
    queue.add("a"); // dirty while processing: an add
    tokio::time::sleep(Duration::from_millis(700)).await;
    queue.done(&"a");
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");

    let events: Vec<Event> = recorder
        .events
        .lock()
        .iter()
        .copied()
        .filter(|event| !matches!(event, Event::Unfinished(..)))
        .collect();
    assert_eq!(
        events,
        vec![
            Event::Add,
            Event::Get(Duration::from_millis(30)),
            Event::Add,
            Event::Done(Duration::from_millis(700)),
            Event::Get(Duration::from_millis(705)),
            Event::Done(Duration::ZERO),
        ]
    );
    // The refresh ran while "a" was in flight for 700 ms (every 500 ms).
    let unfinished: Vec<Event> = recorder
        .events
        .lock()
        .iter()
        .copied()
        .filter(|event| matches!(event, Event::Unfinished(..)))
        .collect();
    assert!(unfinished.contains(&Event::Unfinished(
        Duration::from_millis(470),
        Duration::from_millis(470)
    )));
}
