//! [`Metrics`] without the `metrics` feature: the same types and methods, recording nothing, so
//! code that uses them compiles either way.

use std::sync::Arc;
use std::time::Duration;

use workqueue::MetricsProvider;

use crate::ops::metrics::informers::InformerSet;
use crate::ops::metrics::reconciles::{CountsReconciles, ReportsStaleness};

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
    pub(crate) fn controller(
        &self,
        _name: &str,
        _workers: usize,
        _counts: Arc<dyn CountsReconciles>,
        _staleness: Arc<dyn ReportsStaleness>,
    ) -> ControllerMetrics {
        ControllerMetrics
    }
    pub(crate) fn queue_provider(&self, _prioritized: bool) -> Option<Arc<dyn MetricsProvider>> {
        None
    }
    pub(crate) fn leader(&self, _name: &str) -> LeaderMetrics {
        LeaderMetrics
    }
}

/// One controller's series: nothing, without the `metrics` feature.
#[derive(Clone)]
pub(crate) struct ControllerMetrics;

impl ControllerMetrics {
    pub(crate) fn reconciled(&self, _took: Duration) {}
}

/// A lease's series: nothing, without the `metrics` feature.
#[derive(Clone)]
pub(crate) struct LeaderMetrics;

impl LeaderMetrics {
    pub(crate) fn leading(&self, _leading: bool) {}
    pub(crate) fn slowpath(&self) {}
}
