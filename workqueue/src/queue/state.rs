//! What a queue keeps under its lock, as the shared hand-off code (`shared`,
//! `ops`) sees it: the [`QueueState`] trait, and its implementation for the plain
//! queue's [`Store`].
//!
//! The hand-off code (the inbox of adds that found the lock taken, sleeping workers and their
//! wake-ups, shutdown and drain, metrics) is the same for the plain [`Queue`](crate::Queue) and
//! the [`PriorityQueue`](crate::PriorityQueue); what differs is what an add carries (an item,
//! or an item and its priority), what a get hands out, and which metric events an add causes.

use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use crate::metrics::QueueMetrics;
use crate::queue::order::Fifo;
use crate::queue::store::{Added, Done, Store};

/// The state a queue's lock guards (besides its shutdown flags).
pub(crate) trait QueueState: Send + 'static {
    /// The queue's item.
    type Item;
    /// What an add hands in.
    type Entry: Send + 'static;
    /// What a get hands out.
    type Taken;
    /// The metric events of adds, collected under the lock and reported after it.
    type Adds: Adds;

    /// An empty state; `timed` keeps the timestamps that metrics need.
    fn new(timed: bool) -> Self;

    /// Adds `entry` (the queue is not shutting down), recording its metric events in `adds`.
    fn add(&mut self, entry: Self::Entry, adds: &mut Self::Adds);

    /// Hands out the queued item that goes out first; when timed, sets `queued_for`.
    fn take(&mut self, queued_for: &mut Option<Duration>) -> Option<Self::Taken>;

    /// Reports to `sink` that `taken` was handed out after waiting `queued_for`.
    fn report_get(taken: &Self::Taken, sink: &dyn QueueMetrics, queued_for: Duration);

    /// Releases `item` from its worker, with how long it was held when timed.
    fn done(&mut self, item: &Self::Item) -> (Done, Option<Duration>);

    /// Items waiting for a worker (not counting items held by workers).
    fn queued(&self) -> usize;

    /// Whether nothing is queued and nothing is in flight.
    fn is_empty(&self) -> bool;

    /// The sum of the ages of the in-flight items and the age of the oldest, at `now`.
    fn unfinished(&self, now: Instant) -> (Duration, Duration);

    /// The queue shuts down (under the lock, before the last adds are taken from the inbox).
    fn close(&mut self) {}
}

/// Metric events of adds, collected under the queue's lock.
pub(crate) trait Adds: Default {
    /// Reports the events to `sink`, once the lock is released.
    fn report(self, sink: &dyn QueueMetrics);
}

/// The plain queue counts its genuinely new adds.
impl Adds for usize {
    #[inline]
    fn report(self, sink: &dyn QueueMetrics) {
        for _ in 0..self {
            sink.add();
        }
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> QueueState for Store<T, Fifo> {
    type Item = T;
    type Entry = T;
    type Taken = T;
    type Adds = usize;

    fn new(timed: bool) -> Self {
        Store::new(timed)
    }

    #[inline]
    fn add(&mut self, item: T, adds: &mut usize) {
        if Store::add(self, item, ()) != Added::Ignored {
            *adds += 1;
        }
    }

    #[inline]
    fn take(&mut self, queued_for: &mut Option<Duration>) -> Option<T> {
        Store::take(self, queued_for).map(|(item, ())| item)
    }

    #[inline]
    fn report_get(_: &T, sink: &dyn QueueMetrics, queued_for: Duration) {
        sink.get(queued_for);
    }

    #[inline]
    fn done(&mut self, item: &T) -> (Done, Option<Duration>) {
        Store::done(self, item)
    }

    #[inline]
    fn queued(&self) -> usize {
        Store::queued(self)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        Store::is_empty(self)
    }

    fn unfinished(&self, now: Instant) -> (Duration, Duration) {
        Store::unfinished(self, now)
    }
}
