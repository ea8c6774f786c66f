//! [`SharderStats`]: what a sharder has written since it started, and the ring it last saw.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sharding::assignment::Assignment;

/// Counters of a [`Sharder`](crate::sharding::Sharder), shared with its handle. Cheap to read
/// at any time; every count is of writes the API server accepted.
#[derive(Debug, Default)]
pub struct SharderStats {
    assigned: AtomicU64,
    drains: AtomicU64,
    reassigned: AtomicU64,
    failures: AtomicU64,
    ring_size: AtomicU64,
    passes: AtomicU64,
    leading: AtomicBool,
}

/// A snapshot of [`SharderStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SharderCounts {
    /// Objects given a shard (unlabelled ones, and drained ones after their shard let go).
    pub assigned: u64,
    /// Drain labels set: an object asked to leave its live shard.
    pub drains: u64,
    /// Objects moved at once: off a dead shard, or owned objects following their owner.
    pub reassigned: u64,
    /// Label writes that failed for another reason than a conflict (retried by the next pass).
    pub failures: u64,
    /// Shards on the ring at the last pass.
    pub ring_size: u64,
    /// Passes run while leading.
    pub passes: u64,
}

impl SharderCounts {
    /// Objects that left a shard: drained plus reassigned.
    pub fn moves(&self) -> u64 {
        self.drains + self.reassigned
    }
}

impl SharderStats {
    /// The counts now.
    pub fn counts(&self) -> SharderCounts {
        SharderCounts {
            assigned: self.assigned.load(Ordering::Relaxed),
            drains: self.drains.load(Ordering::Relaxed),
            reassigned: self.reassigned.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            ring_size: self.ring_size.load(Ordering::Relaxed),
            passes: self.passes.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn record(&self, step: &Assignment) {
        let counter = match step {
            Assignment::Assign { .. } => &self.assigned,
            Assignment::Drain { .. } => &self.drains,
            Assignment::Reassign { .. } => &self.reassigned,
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the candidate counting here leads the ring's sharder now.
    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::Relaxed)
    }

    pub(crate) fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::Relaxed);
    }

    pub(crate) fn record_failure(&self) {
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn set_ring_size(&self, shards: usize) {
        self.ring_size
            .store(u64::try_from(shards).unwrap_or(u64::MAX), Ordering::Relaxed);
        self.passes.fetch_add(1, Ordering::Relaxed);
    }
}
