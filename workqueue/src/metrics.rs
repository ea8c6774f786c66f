//! Metrics hooks: the events behind client-go's `workqueue_*` metrics.
//!
//! A queue reports metrics only when it is *named* and a [`MetricsProvider`] is installed
//! (see [`QueueConfig`](crate::QueueConfig)). Unnamed queues keep no timestamps at all: the hot
//! path then never reads the clock and never calls a hook.
//!
//! | client-go metric | hook |
//! |---|---|
//! | `workqueue_depth` (gauge) | +1 on [`QueueMetrics::add`], −1 on [`QueueMetrics::get`] |
//! | `workqueue_adds_total` (counter) | [`QueueMetrics::add`] (adds absorbed by the dirty set are not reported) |
//! | `workqueue_queue_duration_seconds` (histogram) | `queued_for` of [`QueueMetrics::get`]: first add → get |
//! | `workqueue_work_duration_seconds` (histogram) | `worked_for` of [`QueueMetrics::done`]: get → done |
//! | `workqueue_unfinished_work_seconds` (gauge) | `unfinished_work` of [`QueueMetrics::update_unfinished`] |
//! | `workqueue_longest_running_processor_seconds` (gauge) | `longest_running` of [`QueueMetrics::update_unfinished`] |
//! | `workqueue_retries_total` (counter) | [`QueueMetrics::retry`]: every `add_after` call, including those made by `add_rate_limited` |
//!
//! The unfinished-work gauges are refreshed every [`UNFINISHED_WORK_UPDATE_PERIOD`] by a small
//! tokio task that exists only for queues with metrics.
//!
//! A [`PriorityQueue`](crate::PriorityQueue) reports its adds and gets with the item's priority
//! instead ([`QueueMetrics::add_with_priority`], [`QueueMetrics::get_with_priority`]), and
//! [`QueueMetrics::priority_raised`] when a waiting item moves to a higher priority, so that
//! `workqueue_depth` can carry controller-runtime's `priority` label. Their default bodies fall
//! back to the plain hooks, so a provider written for the plain queues works unchanged.

use std::sync::Arc;
use std::time::Duration;

use crate::add_options::Priority;

/// How often the unfinished-work gauges are refreshed (client-go: 500 ms).
pub const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Receives the events of one named queue.
///
/// Every method has an empty default body, so an implementation overrides only what it
/// exports. Hooks are called outside the queue's lock but on the caller's thread: keep them
/// cheap (an atomic add, a histogram observation) and never block in them.
pub trait QueueMetrics: Send + Sync {
    /// A genuinely new item was added (it was not already waiting to be processed):
    /// `workqueue_adds_total` +1 and `workqueue_depth` +1.
    fn add(&self) {}

    /// An item was handed to a worker after waiting `queued_for` since its first add:
    /// `workqueue_depth` −1 and an observation of `workqueue_queue_duration_seconds`.
    fn get(&self, queued_for: Duration) {
        let _ = queued_for;
    }

    /// A worker finished an item it held for `worked_for`:
    /// an observation of `workqueue_work_duration_seconds`.
    fn done(&self, worked_for: Duration) {
        let _ = worked_for;
    }

    /// An item was scheduled for a later add (`add_after`, `add_rate_limited`):
    /// `workqueue_retries_total` +1.
    fn retry(&self) {}

    /// The priority queue's [`add`](QueueMetrics::add): a genuinely new item became ready to
    /// be handed out (or to be queued again on `done`) with `priority`:
    /// `workqueue_adds_total` +1 and `workqueue_depth{priority}` +1. Items waiting for their
    /// ready time are not counted until they are ready. Defaults to [`add`](QueueMetrics::add).
    fn add_with_priority(&self, priority: Priority) {
        let _ = priority;
        self.add();
    }

    /// The priority queue's [`get`](QueueMetrics::get): an item of `priority` was handed to a
    /// worker after waiting `queued_for` since it became ready: `workqueue_depth{priority}` −1
    /// and an observation of `workqueue_queue_duration_seconds`. Defaults to
    /// [`get`](QueueMetrics::get).
    fn get_with_priority(&self, priority: Priority, queued_for: Duration) {
        let _ = priority;
        self.get(queued_for);
    }

    /// A ready item of the priority queue moved from priority `from` to the higher `to`:
    /// `workqueue_depth{from}` −1 and `workqueue_depth{to}` +1 (no add). Does nothing by
    /// default.
    fn priority_raised(&self, from: Priority, to: Priority) {
        let _ = (from, to);
    }

    /// Periodic refresh of the in-flight gauges: `unfinished_work` is the sum of the ages of
    /// all items being processed (`workqueue_unfinished_work_seconds`), `longest_running` the
    /// age of the oldest one (`workqueue_longest_running_processor_seconds`).
    fn update_unfinished(&self, unfinished_work: Duration, longest_running: Duration) {
        let _ = (unfinished_work, longest_running);
    }
}

/// Creates the [`QueueMetrics`] of each named queue; typically one provider per process,
/// labelling every series with the queue's name (the `name` label of client-go's metrics).
pub trait MetricsProvider: Send + Sync {
    /// Returns the metrics sink of the queue called `name`.
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics>;
}

/// A [`MetricsProvider`] whose queues report nothing. Installing it is equivalent to
/// installing no provider, except that the queue still keeps its timestamps.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetrics;

impl QueueMetrics for NoopMetrics {}

impl MetricsProvider for NoopMetrics {
    fn queue_metrics(&self, _name: &str) -> Arc<dyn QueueMetrics> {
        Arc::new(NoopMetrics)
    }
}
