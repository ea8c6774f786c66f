//! [`ControllerStats`]: a controller's reconcile counters (the data behind
//! `controller_runtime_reconcile_*` metrics) and those of its external sources.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one controller, updated after every reconcile (and by its external sources).
#[derive(Debug, Default)]
pub struct ControllerStats {
    pub(crate) success: AtomicU64,
    pub(crate) requeue: AtomicU64,
    pub(crate) requeue_after: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) terminal_errors: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) active_workers: AtomicU64,
    pub(crate) source_errors: AtomicU64,
    pub(crate) sources_ended: AtomicU64,
}

impl ControllerStats {
    /// Reconciles that returned `Action::Done`.
    pub fn successes(&self) -> u64 {
        self.success.load(Ordering::Relaxed)
    }

    /// Reconciles that returned `Action::Requeue`.
    pub fn requeues(&self) -> u64 {
        self.requeue.load(Ordering::Relaxed)
    }

    /// Reconciles that returned `Action::RequeueAfter`.
    pub fn requeues_after(&self) -> u64 {
        self.requeue_after.load(Ordering::Relaxed)
    }

    /// Reconciles that failed with a retried error, panicked or timed out.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Reconciles that failed with a terminal error (not retried).
    pub fn terminal_errors(&self) -> u64 {
        self.terminal_errors.load(Ordering::Relaxed)
    }

    /// Reconciles that panicked (also counted in [`errors`](Self::errors)).
    pub fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }

    /// Reconciles cancelled by the reconcile timeout (also counted in [`errors`](Self::errors)).
    pub fn timeouts(&self) -> u64 {
        self.timeouts.load(Ordering::Relaxed)
    }

    /// Workers reconciling right now.
    pub fn active_workers(&self) -> u64 {
        self.active_workers.load(Ordering::Relaxed)
    }

    /// Errors yielded by external sources (each logged; the source is read on).
    pub fn source_errors(&self) -> u64 {
        self.source_errors.load(Ordering::Relaxed)
    }

    /// External sources that ended (each logged; the controller runs on without them).
    pub fn sources_ended(&self) -> u64 {
        self.sources_ended.load(Ordering::Relaxed)
    }

    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
