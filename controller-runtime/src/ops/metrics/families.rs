//! The Prometheus metric families of a manager, with controller-runtime's names, help texts and
//! buckets, and how they are registered.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::ops::metrics::buckets::RECONCILE_TIME_BUCKETS;

/// A series' labels, in order.
pub(super) type Labels = Vec<(String, String)>;
/// A gauge of seconds.
pub(super) type F64Gauge = Gauge<f64, AtomicU64>;
/// Histograms built with their family's buckets.
pub(super) type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

/// A histogram with [`RECONCILE_TIME_BUCKETS`].
fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

/// client-go's workqueue duration buckets: 10 ns × 10^k for k in 0..12 (10 ns to 1000 s).
fn queue_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// Labels from name-value pairs.
pub(crate) fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

/// The metric families whose series are recorded as events happen (the reconcile counters are
/// read from the controllers at scrape time: `controller_collector.rs`); the series are created
/// per controller, queue and lease.
pub(super) struct Families {
    pub(super) reconcile_time: HistogramFamily,
    pub(super) max_concurrent: Family<Labels, Gauge>,
    pub(super) depth: Family<Labels, Gauge>,
    pub(super) adds: Family<Labels, Counter>,
    pub(super) queue_duration: HistogramFamily,
    pub(super) work_duration: HistogramFamily,
    pub(super) unfinished: Family<Labels, F64Gauge>,
    pub(super) longest: Family<Labels, F64Gauge>,
    pub(super) retries: Family<Labels, Counter>,
    pub(super) leader: Family<Labels, Gauge>,
    pub(super) slowpath: Family<Labels, Counter>,
}

impl Families {
    /// Every family, without series.
    pub(super) fn new() -> Self {
        Self {
            reconcile_time: Family::new_with_constructor(reconcile_histogram),
            max_concurrent: Family::default(),
            depth: Family::default(),
            adds: Family::default(),
            queue_duration: Family::new_with_constructor(queue_histogram),
            work_duration: Family::new_with_constructor(queue_histogram),
            unfinished: Family::default(),
            longest: Family::default(),
            retries: Family::default(),
            leader: Family::default(),
            slowpath: Family::default(),
        }
    }

    /// Registers every family in `registry`.
    pub(super) fn register(&self, registry: &mut Registry) {
        // Counters are registered without `_total`: the encoder appends it.
        let f = self;
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            f.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            f.max_concurrent.clone(),
        );
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            f.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            f.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            f.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            f.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
            f.unfinished.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            f.longest.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            f.retries.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            f.leader.clone(),
        );
        registry.register(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
            f.slowpath.clone(),
        );
    }
}
