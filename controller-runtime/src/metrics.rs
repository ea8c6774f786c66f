//! [`Metrics`]: the manager's Prometheus registry, with controller-runtime's metric names and
//! labels so existing dashboards work unchanged (see `docs/operations.md` for the full list).
//!
//! One registry per [`Manager`](crate::Manager), never a process global: tests that run many
//! managers in one process see independent counters. Rendered by [`Metrics::render`] (Prometheus
//! text exposition 0.0.4) or [`Metrics::render_openmetrics`], and served on `/metrics` when the
//! manager has a metrics bind address.
//!
//! Without the `metrics` feature every type here still exists, records nothing, and renders an
//! empty page, so code that uses them compiles either way.

use std::sync::Arc;

use parking_lot::Mutex;

/// Buckets of `controller_runtime_reconcile_time_seconds`: controller-runtime's 40 buckets from
/// 5 ms to 60 s.
pub const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// What the informer metrics read from one informer, type-erased.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) trait InformerStats: Send + Sync {
    fn name(&self) -> &str;
    fn cache_size(&self) -> usize;
    fn listener_buffers(&self) -> Vec<informer::ListenerBuffer>;
    fn last_sync_resource_version(&self) -> String;
    fn lists(&self) -> u64;
    fn watches(&self) -> u64;
}

impl<K: informer::Object> InformerStats for informer::SharedIndexInformer<K> {
    fn name(&self) -> &str {
        informer::SharedIndexInformer::name(self)
    }
    fn cache_size(&self) -> usize {
        informer::SharedIndexInformer::cache_size(self)
    }
    fn listener_buffers(&self) -> Vec<informer::ListenerBuffer> {
        informer::SharedIndexInformer::listener_buffers(self)
    }
    fn last_sync_resource_version(&self) -> String {
        informer::SharedIndexInformer::last_sync_resource_version(self)
    }
    fn lists(&self) -> u64 {
        informer::SharedIndexInformer::list_count(self)
    }
    fn watches(&self) -> u64 {
        informer::SharedIndexInformer::watch_count(self)
    }
}

/// The informers whose statistics are exported; filled as the manager hands out informers.
#[derive(Default, Clone)]
pub(crate) struct InformerSet {
    informers: Arc<Mutex<Vec<Arc<dyn InformerStats>>>>,
}

impl InformerSet {
    /// Adds `informer` unless it is already there (the factory shares informers).
    pub(crate) fn insert(&self, informer: Arc<dyn InformerStats>) {
        let mut informers = self.informers.lock();
        let address = Arc::as_ptr(&informer) as *const ();
        if !informers
            .iter()
            .any(|known| Arc::as_ptr(known) as *const () == address)
        {
            informers.push(informer);
        }
    }

    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    fn snapshot(&self) -> Vec<Arc<dyn InformerStats>> {
        self.informers.lock().clone()
    }
}

impl std::fmt::Debug for InformerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InformerSet")
            .field("informers", &self.informers.lock().len())
            .finish()
    }
}

#[cfg(feature = "metrics")]
pub use enabled::*;

#[cfg(not(feature = "metrics"))]
pub use disabled::*;

#[cfg(feature = "metrics")]
mod enabled {
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    use parking_lot::Mutex;
    use prometheus_client::collector::Collector;
    use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
    use prometheus_client::metrics::MetricType;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
    use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
    use prometheus_client::registry::Registry;
    use workqueue::{MetricsProvider, QueueMetrics};

    use super::{InformerSet, RECONCILE_TIME_BUCKETS};

    type Labels = Vec<(String, String)>;
    type F64Gauge = Gauge<f64, AtomicU64>;
    type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

    fn reconcile_histogram() -> Histogram {
        Histogram::new(RECONCILE_TIME_BUCKETS)
    }

    /// client-go's workqueue duration buckets: 10 ns × 10^k for k in 0..12 (10 ns to 1000 s).
    fn queue_histogram() -> Histogram {
        Histogram::new(exponential_buckets(10e-9, 10.0, 12))
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    struct Families {
        reconcile_total: Family<Labels, Counter>,
        reconcile_errors: Family<Labels, Counter>,
        terminal_errors: Family<Labels, Counter>,
        panics: Family<Labels, Counter>,
        timeouts: Family<Labels, Counter>,
        reconcile_time: HistogramFamily,
        max_concurrent: Family<Labels, Gauge>,
        active_workers: Family<Labels, Gauge>,
        depth: Family<Labels, Gauge>,
        adds: Family<Labels, Counter>,
        queue_duration: HistogramFamily,
        work_duration: HistogramFamily,
        unfinished: Family<Labels, F64Gauge>,
        longest: Family<Labels, F64Gauge>,
        retries: Family<Labels, Counter>,
        leader: Family<Labels, Gauge>,
        slowpath: Family<Labels, Counter>,
    }

    /// A manager's Prometheus registry (see the [module docs](crate::metrics)). Cheap to clone.
    #[derive(Clone)]
    pub struct Metrics {
        registry: Arc<Mutex<Registry>>,
        families: Arc<Families>,
    }

    impl std::fmt::Debug for Metrics {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Metrics").finish_non_exhaustive()
        }
    }

    impl Metrics {
        /// A registry with every metric of this crate registered (and no series yet).
        pub(crate) fn new(informers: InformerSet) -> Self {
            let families = Families {
                reconcile_total: Family::default(),
                reconcile_errors: Family::default(),
                terminal_errors: Family::default(),
                panics: Family::default(),
                timeouts: Family::default(),
                reconcile_time: Family::new_with_constructor(reconcile_histogram),
                max_concurrent: Family::default(),
                active_workers: Family::default(),
                depth: Family::default(),
                adds: Family::default(),
                queue_duration: Family::new_with_constructor(queue_histogram),
                work_duration: Family::new_with_constructor(queue_histogram),
                unfinished: Family::default(),
                longest: Family::default(),
                retries: Family::default(),
                leader: Family::default(),
                slowpath: Family::default(),
            };
            let mut registry = Registry::default();
            // Counters are registered without `_total`: the encoder appends it.
            let f = &families;
            registry.register(
                "controller_runtime_reconcile",
                "Total number of reconciliations per controller",
                f.reconcile_total.clone(),
            );
            registry.register(
                "controller_runtime_reconcile_errors",
                "Total number of reconciliation errors per controller",
                f.reconcile_errors.clone(),
            );
            registry.register(
                "controller_runtime_terminal_reconcile_errors",
                "Total number of terminal reconciliation errors per controller",
                f.terminal_errors.clone(),
            );
            registry.register(
                "controller_runtime_reconcile_panics",
                "Total number of reconciliation panics per controller",
                f.panics.clone(),
            );
            registry.register(
                "controller_runtime_reconcile_timeouts",
                "Total number of reconciliation timeouts per controller",
                f.timeouts.clone(),
            );
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
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                f.active_workers.clone(),
            );
            registry.register(
                "workqueue_depth",
                "Current depth of workqueue",
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
            registry.register_collector(Box::new(InformerCollector(informers)));
            Self {
                registry: Arc::new(Mutex::new(registry)),
                families: Arc::new(families),
            }
        }

        /// The metrics in Prometheus text exposition format 0.0.4 (what `/metrics` serves).
        pub fn render(&self) -> String {
            to_prometheus_text(&self.render_openmetrics())
        }

        /// The metrics in OpenMetrics text format 1.0.0 (ends with `# EOF`).
        pub fn render_openmetrics(&self) -> String {
            let mut out = String::new();
            let registry = self.registry.lock();
            if let Err(error) = prometheus_client::encoding::text::encode(&mut out, &registry) {
                tracing::error!(%error, "cannot encode metrics");
            }
            out
        }

        /// Registers extra metrics of the application in this manager's registry, so they are
        /// served on `/metrics` too.
        pub fn with_registry<T>(&self, register: impl FnOnce(&mut Registry) -> T) -> T {
            register(&mut self.registry.lock())
        }

        /// The series of one controller (created with zero values, as controller-runtime
        /// initialises them so dashboards show the controller before its first reconcile).
        pub(crate) fn controller(&self, name: &str, workers: usize) -> ControllerMetrics {
            let f = &self.families;
            let controller = labels(&[("controller", name)]);
            let result = |result: &str| {
                f.reconcile_total
                    .get_or_create_owned(&labels(&[("controller", name), ("result", result)]))
            };
            let metrics = ControllerMetrics {
                success: result("success"),
                error: result("error"),
                requeue: result("requeue"),
                requeue_after: result("requeue_after"),
                errors: f.reconcile_errors.get_or_create_owned(&controller),
                terminal: f.terminal_errors.get_or_create_owned(&controller),
                panics: f.panics.get_or_create_owned(&controller),
                timeouts: f.timeouts.get_or_create_owned(&controller),
                time: f.reconcile_time.get_or_create_owned(&controller),
                active: f.active_workers.get_or_create_owned(&controller),
            };
            f.max_concurrent
                .get_or_create_owned(&controller)
                .set(i64::try_from(workers).unwrap_or(i64::MAX));
            metrics
        }

        /// The workqueue metrics provider: every series labelled `name` and `controller`
        /// (both the controller's name, as in controller-runtime).
        pub(crate) fn queue_provider(&self) -> Option<Arc<dyn MetricsProvider>> {
            Some(Arc::new(QueueProvider(Arc::clone(&self.families))))
        }

        /// The leader-election series of lease `name`.
        pub(crate) fn leader(&self, name: &str) -> LeaderMetrics {
            let lease = labels(&[("name", name)]);
            let metrics = LeaderMetrics {
                status: self.families.leader.get_or_create_owned(&lease),
                slowpath: self.families.slowpath.get_or_create_owned(&lease),
            };
            metrics.status.set(0);
            metrics
        }
    }

    /// One controller's series.
    #[derive(Clone)]
    pub(crate) struct ControllerMetrics {
        success: Counter,
        error: Counter,
        requeue: Counter,
        requeue_after: Counter,
        errors: Counter,
        terminal: Counter,
        panics: Counter,
        timeouts: Counter,
        time: Histogram,
        active: Gauge,
    }

    impl ControllerMetrics {
        pub(crate) fn worker_started(&self) {
            self.active.inc();
        }
        pub(crate) fn worker_finished(&self) {
            self.active.dec();
        }
        pub(crate) fn reconciled(&self, took: Duration) {
            self.time.observe(took.as_secs_f64());
        }
        pub(crate) fn success(&self) {
            self.success.inc();
        }
        pub(crate) fn requeue(&self) {
            self.requeue.inc();
        }
        pub(crate) fn requeue_after(&self) {
            self.requeue_after.inc();
        }
        /// A retried error (also panics and timeouts): `result="error"` and the errors counter.
        pub(crate) fn error(&self) {
            self.error.inc();
            self.errors.inc();
        }
        /// A terminal error: `result="error"`, the errors and the terminal errors counters.
        pub(crate) fn terminal(&self) {
            self.error.inc();
            self.errors.inc();
            self.terminal.inc();
        }
        pub(crate) fn panic(&self) {
            self.panics.inc();
        }
        pub(crate) fn timeout(&self) {
            self.timeouts.inc();
        }
    }

    /// The leader-election series of one lease.
    #[derive(Clone)]
    pub(crate) struct LeaderMetrics {
        status: Gauge,
        slowpath: Counter,
    }

    impl LeaderMetrics {
        pub(crate) fn leading(&self, leading: bool) {
            self.status.set(i64::from(leading));
        }
        pub(crate) fn slowpath(&self) {
            self.slowpath.inc();
        }
    }

    struct QueueProvider(Arc<Families>);

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

    /// Reads the informers at scrape time (beyond controller-runtime, after its issue #3182).
    struct InformerCollector(InformerSet);

    impl std::fmt::Debug for InformerCollector {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_tuple("InformerCollector").finish()
        }
    }

    fn gauge<V: prometheus_client::encoding::EncodeGaugeValue + Copy>(
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        samples: &[(Labels, V)],
    ) -> Result<(), std::fmt::Error> {
        let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for (labels, value) in samples {
            ConstGauge::new(*value).encode(metric.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn counter(
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        samples: &[(Labels, u64)],
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::metrics::counter::ConstCounter;
        let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
        for (labels, value) in samples {
            ConstCounter::new(*value).encode(metric.encode_family(labels)?)?;
        }
        Ok(())
    }

    impl Collector for InformerCollector {
        fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
            let informers = self.0.snapshot();
            let mut objects = Vec::new();
            let mut buffers = Vec::new();
            let mut versions = Vec::new();
            let mut lists = Vec::new();
            let mut watches = Vec::new();
            for informer in &informers {
                let name = informer.name();
                let set = labels(&[("informer", name)]);
                objects.push((set.clone(), informer.cache_size() as i64));
                for buffer in informer.listener_buffers() {
                    buffers.push((
                        labels(&[("informer", name), ("handler", &buffer.handler)]),
                        buffer.len as i64,
                    ));
                }
                if let Ok(version) = informer.last_sync_resource_version().parse::<u64>() {
                    versions.push((set.clone(), version as f64));
                }
                lists.push((set.clone(), informer.lists()));
                watches.push((set, informer.watches()));
            }
            gauge(
                &mut encoder,
                "controller_runtime_informer_cache_objects",
                "Number of objects in the informer's cache",
                &objects,
            )?;
            gauge(
                &mut encoder,
                "controller_runtime_informer_listener_buffer_length",
                "Notifications waiting in each event handler's buffer",
                &buffers,
            )?;
            gauge(
                &mut encoder,
                "controller_runtime_informer_last_sync_resource_version",
                "resourceVersion of the last list or watch event the informer processed (only when numeric)",
                &versions,
            )?;
            counter(
                &mut encoder,
                "controller_runtime_informer_lists",
                "List requests made by the informer's reflector",
                &lists,
            )?;
            counter(
                &mut encoder,
                "controller_runtime_informer_watches",
                "Watch requests made by the informer's reflector",
                &watches,
            )?;
            Ok(())
        }
    }

    /// Turns OpenMetrics text into Prometheus text 0.0.4: counter families are named with their
    /// `_total` suffix in `# HELP`/`# TYPE`, and `# UNIT`/`# EOF` lines are dropped.
    pub(crate) fn to_prometheus_text(openmetrics: &str) -> String {
        let lines: Vec<&str> = openmetrics.lines().collect();
        let mut counters = std::collections::HashSet::new();
        for line in &lines {
            if let Some(rest) = line.strip_prefix("# TYPE ")
                && let Some(name) = rest.strip_suffix(" counter")
            {
                counters.insert(name.to_owned());
            }
        }
        let mut out = String::with_capacity(openmetrics.len());
        for line in lines {
            if line.starts_with("# EOF") || line.starts_with("# UNIT ") {
                continue;
            }
            let header = line
                .strip_prefix("# HELP ")
                .map(|rest| ("# HELP ", rest))
                .or_else(|| line.strip_prefix("# TYPE ").map(|rest| ("# TYPE ", rest)));
            if let Some((prefix, rest)) = header {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                if counters.contains(name) {
                    out.push_str(&format!("{prefix}{name}_total {tail}\n"));
                    continue;
                }
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

#[cfg(not(feature = "metrics"))]
mod disabled {
    use std::sync::Arc;
    use std::time::Duration;

    use workqueue::MetricsProvider;

    use super::InformerSet;

    /// A manager's metrics; without the `metrics` feature, it records nothing and renders an
    /// empty page.
    #[derive(Clone, Debug)]
    pub struct Metrics;

    impl Metrics {
        pub(crate) fn new(_informers: InformerSet) -> Self {
            Self
        }
        /// Empty without the `metrics` feature.
        pub fn render(&self) -> String {
            String::new()
        }
        /// `# EOF` only, without the `metrics` feature.
        pub fn render_openmetrics(&self) -> String {
            "# EOF\n".to_owned()
        }
        pub(crate) fn controller(&self, _name: &str, _workers: usize) -> ControllerMetrics {
            ControllerMetrics
        }
        pub(crate) fn queue_provider(&self) -> Option<Arc<dyn MetricsProvider>> {
            None
        }
        pub(crate) fn leader(&self, _name: &str) -> LeaderMetrics {
            LeaderMetrics
        }
    }

    #[derive(Clone)]
    pub(crate) struct ControllerMetrics;

    impl ControllerMetrics {
        pub(crate) fn worker_started(&self) {}
        pub(crate) fn worker_finished(&self) {}
        pub(crate) fn reconciled(&self, _took: Duration) {}
        pub(crate) fn success(&self) {}
        pub(crate) fn requeue(&self) {}
        pub(crate) fn requeue_after(&self) {}
        pub(crate) fn error(&self) {}
        pub(crate) fn terminal(&self) {}
        pub(crate) fn panic(&self) {}
        pub(crate) fn timeout(&self) {}
    }

    #[derive(Clone)]
    pub(crate) struct LeaderMetrics;

    impl LeaderMetrics {
        pub(crate) fn leading(&self, _leading: bool) {}
        pub(crate) fn slowpath(&self) {}
    }
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_with_total_in_prometheus_text() {
        let metrics = Metrics::new(InformerSet::default());
        let controller = metrics.controller("foo", 2);
        controller.success();
        let text = metrics.render();
        assert!(text.contains("# TYPE controller_runtime_reconcile_total counter"));
        assert!(text.contains(
            r#"controller_runtime_reconcile_total{controller="foo",result="success"} 1"#
        ));
        assert!(
            text.contains(r#"controller_runtime_max_concurrent_reconciles{controller="foo"} 2"#)
        );
        assert!(!text.contains("# EOF"));
        assert!(metrics.render_openmetrics().ends_with("# EOF\n"));
    }
}
