//! [`Metrics`]: the manager's Prometheus registry, with controller-runtime's metric names and
//! labels so existing dashboards work unchanged (see `docs/operations.md` for the full list).
//!
//! One registry per [`Manager`](crate::manager::Manager), never a process global: tests that run many
//! managers in one process see independent counters. Rendered by [`Metrics::render`] (Prometheus
//! text exposition 0.0.4) or [`Metrics::render_openmetrics`], and served on `/metrics` when the
//! manager has a metrics bind address.
//!
//! Without the `metrics` feature every type here still exists, records nothing, and renders an
//! empty page, so code that uses them compiles either way.
//!
//! The files: the registry and the series of controllers and leases (`prometheus.rs`), the
//! metric families (`families.rs`), the workqueue series (`queue.rs`), the informer statistics
//! (`informers.rs`, `informer_collector.rs`), and the no-op stand-in (`noop.rs`).

mod buckets;
#[cfg(feature = "metrics")]
mod const_series;
#[cfg(feature = "metrics")]
mod controller_collector;
#[cfg(feature = "metrics")]
mod families;
#[cfg(feature = "metrics")]
mod informer_collector;
mod informers;
#[cfg(not(feature = "metrics"))]
mod noop;
#[cfg(feature = "metrics")]
mod prometheus;
#[cfg(feature = "metrics")]
mod queue;
// Without the `metrics` feature nothing reads the counts (the no-op registry ignores them).
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
mod reconciles;

pub use buckets::RECONCILE_TIME_BUCKETS;
#[cfg(feature = "metrics")]
pub(crate) use const_series::{counter, gauge};
#[cfg(feature = "metrics")]
pub(crate) use families::labels;
pub(crate) use informers::InformerSet;
#[cfg(not(feature = "metrics"))]
pub use noop::*;
#[cfg(feature = "metrics")]
pub use prometheus::*;
pub(crate) use reconciles::{CountsReconciles, ReconcileCounts, ReportsStaleness};
