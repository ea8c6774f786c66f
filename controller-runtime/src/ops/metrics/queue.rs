//! The workqueue metrics (`workqueue_*`) of each controller's queue, as the workqueue crate's
//! [`MetricsProvider`] asks for them.
//!
//! `workqueue_depth` carries controller-runtime's `priority` label: the priority of the items
//! counted (`"0"`, `"-100"`, …) for the priority queue, `""` for the plain queue. As in
//! controller-runtime, a queue gets at most [`MAX_PRIORITY_LABELS`] priority series; items of
//! further priorities are counted under `priority="exceeded_cardinality_limit"` (here a
//! priority keeps the series it was first given, so every series rises and falls back to zero).

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use workqueue::{MetricsProvider, Priority, QueueMetrics};

use crate::ops::metrics::families::{F64Gauge, Families, Labels, labels};

/// The most priority series of `workqueue_depth` one queue gets (controller-runtime's
/// `maxRecommendedUniquePriorities`).
const MAX_PRIORITY_LABELS: usize = 25;

/// The `priority` label of the items beyond [`MAX_PRIORITY_LABELS`] priorities.
const EXCEEDED: &str = "exceeded_cardinality_limit";

/// Creates the workqueue series of each controller's queue: every series labelled `name` and
/// `controller` (both the controller's name, as in controller-runtime), `workqueue_depth` also
/// `priority`.
pub(super) struct QueueProvider {
    families: Arc<Families>,
    /// Whether the queue is a priority queue: its depth starts with the `priority="0"` series,
    /// a plain queue's with `priority=""`.
    prioritized: bool,
}

impl QueueProvider {
    /// A provider of series in `families` for a priority queue if `prioritized`.
    pub(super) fn new(families: Arc<Families>, prioritized: bool) -> Self {
        Self {
            families,
            prioritized,
        }
    }
}

impl MetricsProvider for QueueProvider {
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
        let f = &self.families;
        let set = labels(&[("name", name), ("controller", name)]);
        let depth = Depth {
            family: f.depth.clone(),
            name: name.to_owned(),
            plain: Mutex::new(None),
            by_priority: Mutex::new(Vec::new()),
        };
        // The series a queue starts with, at zero (dashboards show the queue at once).
        if self.prioritized {
            depth.change(Some(Priority::NORMAL), 0);
        } else {
            depth.change(None, 0);
        }
        Arc::new(QueueSeries {
            depth,
            adds: f.adds.get_or_create_owned(&set),
            queue_duration: f.queue_duration.get_or_create_owned(&set),
            work_duration: f.work_duration.get_or_create_owned(&set),
            unfinished: f.unfinished.get_or_create_owned(&set),
            longest: f.longest.get_or_create_owned(&set),
            retries: f.retries.get_or_create_owned(&set),
        })
    }
}

/// One queue's `workqueue_depth` series, one per priority label, created on first use.
struct Depth {
    family: Family<Labels, Gauge>,
    name: String,
    /// `priority=""`: the plain queue's items.
    plain: Mutex<Option<Gauge>>,
    /// The priority series, at most [`MAX_PRIORITY_LABELS`], then the one of [`EXCEEDED`]
    /// (`None`), which every further priority shares.
    by_priority: Mutex<Vec<(Option<Priority>, Gauge)>>,
}

impl Depth {
    fn series(&self, priority: &str) -> Gauge {
        let name = self.name.as_str();
        self.family.get_or_create_owned(&labels(&[
            ("name", name),
            ("controller", name),
            ("priority", priority),
        ]))
    }

    /// Moves the depth of `priority` (`None`: the plain queue's) by `delta`.
    fn change(&self, priority: Option<Priority>, delta: i64) {
        let Some(priority) = priority else {
            self.plain
                .lock()
                .get_or_insert_with(|| self.series(""))
                .inc_by(delta);
            return;
        };
        let mut series = self.by_priority.lock();
        if let Some((_, gauge)) = series.iter().find(|(p, _)| *p == Some(priority)) {
            gauge.inc_by(delta);
            return;
        }
        let label = if series.len() < MAX_PRIORITY_LABELS {
            Some(priority)
        } else {
            None
        };
        if let Some((_, gauge)) = series.iter().find(|(p, _)| *p == label) {
            gauge.inc_by(delta);
            return;
        }
        let gauge = match label {
            Some(priority) => self.series(&priority.to_string()),
            None => self.series(EXCEEDED),
        };
        gauge.inc_by(delta);
        series.push((label, gauge));
    }
}

/// One queue's series.
struct QueueSeries {
    depth: Depth,
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
        self.depth.change(None, 1);
    }
    fn get(&self, queued_for: Duration) {
        self.depth.change(None, -1);
        self.queue_duration.observe(queued_for.as_secs_f64());
    }
    fn add_with_priority(&self, priority: Priority) {
        self.adds.inc();
        self.depth.change(Some(priority), 1);
    }
    fn get_with_priority(&self, priority: Priority, queued_for: Duration) {
        self.depth.change(Some(priority), -1);
        self.queue_duration.observe(queued_for.as_secs_f64());
    }
    fn priority_raised(&self, from: Priority, to: Priority) {
        self.depth.change(Some(from), -1);
        self.depth.change(Some(to), 1);
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
