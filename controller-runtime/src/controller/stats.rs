//! [`ControllerStats`]: a controller's reconcile counters — the one count of each outcome, which
//! the `controller_runtime_reconcile_*` metrics read at scrape time — and those of its external
//! sources.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ops::metrics::{CountsReconciles, ReconcileCounts};

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
    pub(crate) stale_skips: AtomicU64,
}

impl ControllerStats {
    /// Reconciles that returned [`Action::done`](crate::controller::Action::done).
    pub fn successes(&self) -> u64 {
        self.success.load(Ordering::Relaxed)
    }

    /// Reconciles that returned [`Action::requeue`](crate::controller::Action::requeue).
    pub fn requeues(&self) -> u64 {
        self.requeue.load(Ordering::Relaxed)
    }

    /// Reconciles that returned
    /// [`Action::requeue_after`](crate::controller::Action::requeue_after).
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

    /// Reconciles skipped (and requeued) because an informer's cache had not caught up with
    /// the controller's own writes (see the module docs on staleness); not counted as
    /// reconciles.
    pub fn stale_skips(&self) -> u64 {
        self.stale_skips.load(Ordering::Relaxed)
    }

    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl CountsReconciles for ControllerStats {
    fn counts(&self) -> ReconcileCounts {
        ReconcileCounts {
            success: self.successes(),
            requeue: self.requeues(),
            requeue_after: self.requeues_after(),
            errors: self.errors(),
            terminal: self.terminal_errors(),
            panics: self.panics(),
            timeouts: self.timeouts(),
            active_workers: self.active_workers(),
            stale_skips: self.stale_skips(),
        }
    }
}
