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
}

/// What keeps a controller's reconcile counts.
pub(crate) trait CountsReconciles: Send + Sync {
    /// The counts now.
    fn counts(&self) -> ReconcileCounts;
}

/// The reconcile counters of every controller of a manager, by controller name. A controller
/// built again under a name used before replaces the earlier one's counters (a counter reset,
/// which Prometheus' `rate` handles).
#[derive(Clone, Default)]
pub(crate) struct ControllerSet(Arc<Mutex<BTreeMap<String, Arc<dyn CountsReconciles>>>>);

impl ControllerSet {
    /// Counts `controller`'s reconciles from `counts`.
    pub(crate) fn insert(&self, controller: &str, counts: Arc<dyn CountsReconciles>) {
        self.0.lock().insert(controller.to_owned(), counts);
    }

    /// Every controller's counts, by name.
    pub(crate) fn snapshot(&self) -> Vec<(String, ReconcileCounts)> {
        self.0
            .lock()
            .iter()
            .map(|(name, counts)| (name.clone(), counts.counts()))
            .collect()
    }
}
