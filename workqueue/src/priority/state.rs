//! What a [`PriorityQueue`](crate::PriorityQueue) keeps under its one lock: the ready and
//! in-flight items (a [`Store`] ordered [`ByPriority`]) and the items waiting for their ready
//! time (a [`Waiting`] set that remembers each item's priority), and the rule that joins them.
//!
//! The rule is controller-runtime's: an item is either ready or waiting, never both. A ready
//! add of a waiting item makes it ready at once (the earlier ready time) with the higher of its
//! two priorities; a delayed add of a ready item leaves it ready and at most raises its
//! priority; a delayed add of a waiting item keeps the earlier ready time and the higher
//! priority. An item in flight may be waiting (a delayed re-add) or marked to be queued again
//! on `done` (a ready re-add), as in the other queues.

use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use crate::add_options::Priority;
use crate::delaying::timer::{Next, Plan};
use crate::delaying::waiting::{Schedule, Waiting};
use crate::metrics::QueueMetrics;
use crate::priority::order::ByPriority;
use crate::queue::state::{Adds, QueueState};
use crate::queue::store::{Added, Done, Store};

/// The ready and the waiting items of a priority queue.
pub(crate) struct PriorityState<T> {
    ready: Store<T, ByPriority>,
    waiting: Waiting<T, Priority>,
}

/// The depth changes of a priority queue's adds, reported per priority (only kept for a queue
/// with metrics).
#[derive(Default)]
pub(crate) struct PriorityAdds {
    /// The first event, kept inline: most operations cause at most one.
    first: Option<DepthChange>,
    more: Vec<DepthChange>,
}

#[derive(Debug, Clone, Copy)]
enum DepthChange {
    /// An item became ready with this priority.
    Added(Priority),
    /// A ready item moved to a higher priority.
    Raised { from: Priority, to: Priority },
}

impl PriorityAdds {
    fn push(&mut self, change: DepthChange) {
        if self.first.is_none() {
            self.first = Some(change);
        } else {
            self.more.push(change);
        }
    }
}

impl Adds for PriorityAdds {
    fn report(self, sink: &dyn QueueMetrics) {
        for change in self.first.into_iter().chain(self.more) {
            match change {
                DepthChange::Added(priority) => sink.add_with_priority(priority),
                DepthChange::Raised { from, to } => sink.priority_raised(from, to),
            }
        }
    }
}

impl<T: Eq + Hash + Clone> PriorityState<T> {
    /// A ready add: a waiting item stops waiting and keeps the higher of its two priorities.
    #[inline]
    fn add_now(&mut self, item: T, priority: Priority, adds: &mut PriorityAdds) {
        let priority = match self.waiting.remove(&item) {
            Some(waited_with) => priority.max(waited_with),
            None => priority,
        };
        self.make_ready(item, priority, adds);
    }

    /// Makes `item` ready with `priority` (it is not waiting), recording the depth change.
    #[inline]
    fn make_ready(&mut self, item: T, priority: Priority, adds: &mut PriorityAdds) {
        let added = self.ready.add(item, priority);
        self.record(added, priority, adds);
    }

    #[inline]
    fn record(&self, added: Added<Priority>, priority: Priority, adds: &mut PriorityAdds) {
        if !self.ready.is_timed() {
            return;
        }
        match added {
            Added::Ignored => {}
            Added::Queued | Added::Dirty => adds.push(DepthChange::Added(priority)),
            Added::Raised(from) => adds.push(DepthChange::Raised { from, to: priority }),
        }
    }

    /// A delayed add: a ready item stays ready (its priority at most rises); any other item
    /// waits until `at`, or until its current ready time if that is earlier.
    pub(crate) fn schedule(
        &mut self,
        item: T,
        at: Instant,
        priority: Priority,
        adds: &mut PriorityAdds,
    ) -> Schedule<T> {
        if let Some(added) = self.ready.raise_if_waiting(&item, priority) {
            self.record(added, priority, adds);
            return Schedule::AlreadyWaiting;
        }
        self.waiting.insert(item, at, priority)
    }

    /// The first step of a rate-limited add: whether the rate limiter must be asked for a
    /// delay. It need not when the item is ready or waiting already (its priority at most
    /// rises, and no failure is counted); otherwise the item is held in the waiting set until
    /// [`schedule_retry`](Self::schedule_retry) gives it its ready time, so that a second
    /// rate-limited add meanwhile counts no second failure.
    pub(crate) fn hold_for_retry(
        &mut self,
        item: &T,
        priority: Priority,
        adds: &mut PriorityAdds,
    ) -> bool {
        if let Some(added) = self.ready.raise_if_waiting(item, priority) {
            self.record(added, priority, adds);
            return false;
        }
        if self.waiting.raise(item, priority) {
            return false;
        }
        self.waiting.hold(item.clone(), priority);
        true
    }

    /// The second step of a rate-limited add: gives the held `item` its ready time, `delay`
    /// from now (ready at once if zero). Nothing happens if it no longer waits: an add made it
    /// ready meanwhile, which is earlier than any retry.
    pub(crate) fn schedule_retry(
        &mut self,
        item: T,
        delay: Duration,
        priority: Priority,
        adds: &mut PriorityAdds,
    ) -> Schedule<T> {
        if !self.waiting.contains(&item) {
            return Schedule::AlreadyWaiting;
        }
        if delay.is_zero() {
            self.add_now(item, priority, adds);
            return Schedule::AlreadyWaiting;
        }
        self.waiting
            .insert(item, crate::delaying::timer::ready_at(delay), priority)
    }

    /// Whether `item` waits for its ready time.
    pub(crate) fn is_waiting(&self, item: &T) -> bool {
        self.waiting.contains(item)
    }

    /// The number of items waiting for their ready time.
    pub(crate) fn num_waiting(&self) -> usize {
        self.waiting.len()
    }

    /// For the timer task: makes the items due now ready (using `due` as a buffer); see
    /// [`Waiting::take_due`].
    pub(crate) fn release_due(
        &mut self,
        due: &mut Vec<(T, Priority)>,
        plan: &mut Plan<'_>,
        adds: &mut PriorityAdds,
    ) -> Option<Next> {
        let next = self.waiting.take_due(due, plan)?;
        for (item, priority) in due.drain(..) {
            self.make_ready(item, priority, adds);
        }
        Some(next)
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> QueueState for PriorityState<T> {
    type Item = T;
    type Entry = (T, Priority);
    type Taken = (T, Priority);
    type Adds = PriorityAdds;

    fn new(timed: bool) -> Self {
        Self {
            ready: Store::new(timed),
            waiting: Waiting::new(),
        }
    }

    #[inline]
    fn add(&mut self, (item, priority): (T, Priority), adds: &mut PriorityAdds) {
        self.add_now(item, priority, adds);
    }

    #[inline]
    fn take(&mut self, queued_for: &mut Option<Duration>) -> Option<(T, Priority)> {
        self.ready.take(queued_for)
    }

    #[inline]
    fn report_get(taken: &(T, Priority), sink: &dyn QueueMetrics, queued_for: Duration) {
        sink.get_with_priority(taken.1, queued_for);
    }

    #[inline]
    fn done(&mut self, item: &T) -> (Done, Option<Duration>) {
        self.ready.done(item)
    }

    #[inline]
    fn queued(&self) -> usize {
        self.ready.queued()
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    fn unfinished(&self, now: Instant) -> (Duration, Duration) {
        self.ready.unfinished(now)
    }

    /// Shutting down discards the waiting items.
    fn close(&mut self) {
        self.waiting.close();
    }
}

impl<T> PriorityState<T> {
    /// Queued, in-flight and waiting items, for `Debug`.
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        let queued = self.ready.queued();
        (queued, self.ready.len() - queued, self.waiting.len())
    }
}
