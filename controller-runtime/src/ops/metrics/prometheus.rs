//! [`Metrics`] with the `metrics` feature: the manager's Prometheus registry, the series of each
//! controller and lease, and the text exposition `/metrics` serves.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use workqueue::MetricsProvider;

use crate::ops::metrics::controller_collector::ControllerCollector;
use crate::ops::metrics::families::{Families, labels};
use crate::ops::metrics::informer_collector::InformerCollector;
use crate::ops::metrics::informers::InformerSet;
use crate::ops::metrics::queue::QueueProvider;
use crate::ops::metrics::reconciles::{ControllerSet, CountsReconciles, ReportsStaleness};

/// A manager's Prometheus registry (see the [module docs](crate::metrics)). Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    families: Arc<Families>,
    controllers: ControllerSet,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry with every metric of this crate registered (and no series yet).
    pub(crate) fn new(informers: InformerSet) -> Self {
        let families = Families::new();
        let mut registry = Registry::default();
        families.register(&mut registry);
        registry.register_collector(Box::new(InformerCollector(informers)));
        let controllers = ControllerSet::default();
        registry.register_collector(Box::new(ControllerCollector(controllers.clone())));
        Self {
            registry: Arc::new(Mutex::new(registry)),
            families: Arc::new(families),
            controllers,
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

    /// The series of one controller, whose reconcile counters are read from `counts` and
    /// whose informers' lag behind its own writes from `staleness`, at scrape time (so they
    /// show zero values before its first reconcile, as controller-runtime initialises them).
    pub(crate) fn controller(
        &self,
        name: &str,
        workers: usize,
        counts: Arc<dyn CountsReconciles>,
        staleness: Arc<dyn ReportsStaleness>,
    ) -> ControllerMetrics {
        let controller = labels(&[("controller", name)]);
        self.controllers.insert(name, counts, staleness);
        self.families
            .max_concurrent
            .get_or_create_owned(&controller)
            .set(i64::try_from(workers).unwrap_or(i64::MAX));
        ControllerMetrics {
            time: self
                .families
                .reconcile_time
                .get_or_create_owned(&controller),
        }
    }

    /// The workqueue metrics provider of a priority queue if `prioritized`, else of a plain
    /// queue: every series labelled `name` and `controller` (both the controller's name, as in
    /// controller-runtime), `workqueue_depth` also `priority`.
    pub(crate) fn queue_provider(&self, prioritized: bool) -> Option<Arc<dyn MetricsProvider>> {
        Some(Arc::new(QueueProvider::new(
            Arc::clone(&self.families),
            prioritized,
        )))
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

/// The series of one controller recorded as it reconciles (its counters are read from its
/// [`ControllerStats`](crate::controller::ControllerStats)).
#[derive(Clone)]
pub(crate) struct ControllerMetrics {
    time: Histogram,
}

impl ControllerMetrics {
    /// A reconcile took `took`.
    pub(crate) fn reconciled(&self, took: Duration) {
        self.time.observe(took.as_secs_f64());
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

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_with_total_in_prometheus_text() {
        struct OneSuccess;
        impl CountsReconciles for OneSuccess {
            fn counts(&self) -> crate::ops::metrics::reconciles::ReconcileCounts {
                crate::ops::metrics::reconciles::ReconcileCounts {
                    success: 1,
                    ..Default::default()
                }
            }
        }
        struct CaughtUp;
        impl ReportsStaleness for CaughtUp {
            fn lag(&self) -> Vec<(String, u64)> {
                vec![("v1 ConfigMap in all namespaces".to_owned(), 3)]
            }
        }
        let metrics = Metrics::new(InformerSet::default());
        let _controller = metrics.controller("foo", 2, Arc::new(OneSuccess), Arc::new(CaughtUp));
        let text = metrics.render();
        assert!(text.contains("# TYPE controller_runtime_reconcile_total counter"));
        assert!(text.contains(
            r#"controller_runtime_reconcile_total{controller="foo",result="success"} 1"#
        ));
        assert!(
            text.contains(r#"controller_runtime_max_concurrent_reconciles{controller="foo"} 2"#)
        );
        assert!(text.contains(
            r#"controller_runtime_stale_informer_lag{controller="foo",informer="v1 ConfigMap in all namespaces"} 3"#
        ));
        assert!(text.contains(r#"controller_runtime_stale_sync_skips_total{controller="foo"} 0"#));
        assert!(!text.contains("# EOF"));
        assert!(metrics.render_openmetrics().ends_with("# EOF\n"));
    }
}
