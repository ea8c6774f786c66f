//! The workqueue metrics (`workqueue_*`) of each controller's queue, as the workqueue crate's
//! [`MetricsProvider`] asks for them.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use workqueue::{MetricsProvider, QueueMetrics};

use crate::ops::metrics::families::{F64Gauge, Families, labels};

/// Creates the workqueue series of each controller's queue: every series labelled `name` and
/// `controller` (both the controller's name, as in controller-runtime).
pub(super) struct QueueProvider(Arc<Families>);

impl QueueProvider {
    /// A provider of series in `families`.
    pub(super) fn new(families: Arc<Families>) -> Self {
        Self(families)
    }
}

impl MetricsProvider for QueueProvider {
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
        let f = &self.0;
        let set = labels(&[("name", name), ("controller", name)]);
        Arc::new(QueueSeries {
            depth: f.depth.get_or_create_owned(&set),
            adds: f.adds.get_or_create_owned(&set),
            queue_duration: f.queue_duration.get_or_create_owned(&set),
            work_duration: f.work_duration.get_or_create_owned(&set),
            unfinished: f.unfinished.get_or_create_owned(&set),
            longest: f.longest.get_or_create_owned(&set),
            retries: f.retries.get_or_create_owned(&set),
        })
    }
}

/// One queue's series.
struct QueueSeries {
    depth: Gauge,
    adds: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
    unfinished: F64Gauge,
    longest: F64Gauge,
    retries: Counter,
}

impl QueueMetrics for QueueSeries {
    fn add(&self) {
        self.adds.inc();
        self.depth.inc();
    }
    fn get(&self, queued_for: Duration) {
        self.depth.dec();
        self.queue_duration.observe(queued_for.as_secs_f64());
    }
    fn done(&self, worked_for: Duration) {
        self.work_duration.observe(worked_for.as_secs_f64());
    }
    fn retry(&self) {
        self.retries.inc();
    }
    fn update_unfinished(&self, unfinished_work: Duration, longest_running: Duration) {
        self.unfinished.set(unfinished_work.as_secs_f64());
        self.longest.set(longest_running.as_secs_f64());
    }
}
