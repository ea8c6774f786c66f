//! The reconcile counters of the controller-runtime series (`controller_runtime_reconcile_total`
//! and its siblings), read at scrape time from each controller's own counters
//! ([`ControllerStats`](crate::controller::ControllerStats)), so every outcome is counted once.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

/// A controller's reconcile counts, as one scrape reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReconcileCounts {
    /// Reconciles that returned a `done` action.
    pub(crate) success: u64,
    /// Reconciles that asked to be requeued after the key's backoff.
    pub(crate) requeue: u64,
    /// Reconciles that asked to be requeued after a delay.
    pub(crate) requeue_after: u64,
    /// Reconciles that failed and are retried (panics and timeouts included).
    pub(crate) errors: u64,
    /// Reconciles that failed with a terminal error.
    pub(crate) terminal: u64,
    /// Reconciles that panicked.
    pub(crate) panics: u64,
    /// Reconciles cancelled by the reconcile timeout.
    pub(crate) timeouts: u64,
    /// Workers reconciling right now.
    pub(crate) active_workers: u64,
    /// Reconciles skipped because the cache had not caught up with the controller's own writes.
    pub(crate) stale_skips: u64,
}

/// What keeps a controller's reconcile counts.
pub(crate) trait CountsReconciles: Send + Sync {
    /// The counts now.
    fn counts(&self) -> ReconcileCounts;
}

/// What tells, per informer a controller watches, how far its cache is behind the newest
/// version the controller wrote through it and still waits for.
pub(crate) trait ReportsStaleness: Send + Sync {
    /// Each informer's name and its lag in resource versions (0 when caught up, or when a
    /// version is not an integer).
    fn lag(&self) -> Vec<(String, u64)>;
}

/// One controller's sources of series.
#[derive(Clone)]
struct Sources {
    counts: Arc<dyn CountsReconciles>,
    staleness: Arc<dyn ReportsStaleness>,
}

/// What one scrape reads of a controller.
pub(crate) struct ControllerSnapshot {
    /// The controller's name.
    pub(crate) name: String,
    /// Its reconcile counts.
    pub(crate) counts: ReconcileCounts,
    /// Its informers' lag behind its own writes.
    pub(crate) lag: Vec<(String, u64)>,
}

/// The reconcile counters of every controller of a manager, by controller name. A controller
/// built again under a name used before replaces the earlier one's counters (a counter reset,
/// which Prometheus' `rate` handles).
#[derive(Clone, Default)]
pub(crate) struct ControllerSet(Arc<Mutex<BTreeMap<String, Sources>>>);

impl ControllerSet {
    /// Counts `controller`'s reconciles from `counts`, its informers' lag from `staleness`.
    pub(crate) fn insert(
        &self,
        controller: &str,
        counts: Arc<dyn CountsReconciles>,
        staleness: Arc<dyn ReportsStaleness>,
    ) {
        self.0
            .lock()
            .insert(controller.to_owned(), Sources { counts, staleness });
    }

    /// Every controller's counts and lag, by name (read outside the set's lock).
    pub(crate) fn snapshot(&self) -> Vec<ControllerSnapshot> {
        let sources: Vec<(String, Sources)> = self
            .0
            .lock()
            .iter()
            .map(|(name, sources)| (name.clone(), sources.clone()))
            .collect();
        sources
            .into_iter()
            .map(|(name, sources)| ControllerSnapshot {
                name,
                counts: sources.counts.counts(),
                lag: sources.staleness.lag(),
            })
            .collect()
    }
}
