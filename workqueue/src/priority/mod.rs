//! The priority queue: a rate-limiting queue whose every add carries a [`Priority`].

mod order;
mod state;

use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::add_options::{AddOptions, Priority};
use crate::config::QueueConfig;
use crate::delaying::timer::{Next, Plan, Timed, ready_at, run_timer};
use crate::delaying::waiting::Schedule;
use crate::interface::{PriorityWorkQueue, impl_queue_traits};
use crate::priority::state::{PriorityAdds, PriorityState};
use crate::queue::shared::Shared;
use crate::rate_limiter::RateLimiter;
use crate::task::LazyTask;

/// A rate-limiting work queue that hands out the highest-priority ready item first, after
/// controller-runtime's priority queue: what a controller uses so that a real change does not
/// wait behind thousands of keys that an initial list or a resync queued.
///
/// Every add carries a [`Priority`] (higher goes out first; [`Priority::NORMAL`] unless
/// given), may wait first ([`add_after`](PriorityQueue::add_after), or a
/// [rate-limited](PriorityQueue::add_rate_limited) retry), and is made with
/// [`add_with`](PriorityQueue::add_with) and [`AddOptions`] in general. A worker takes the
/// highest-priority ready item, first in, first out within one priority, with
/// [`get_with_priority`](PriorityQueue::get_with_priority) (to add it back with the same
/// priority) or [`get`](PriorityQueue::get).
///
/// ```
/// use workqueue::{AddOptions, Priority, PriorityQueue, default_controller_rate_limiter};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = PriorityQueue::new(default_controller_rate_limiter());
/// // Keys from an informer's initial list: low priority.
/// for key in ["default/a", "default/b"] {
///     queue.add_with(key, AddOptions::new().priority(Priority::LOW));
/// }
/// // A live change jumps ahead of them.
/// queue.add("default/changed");
/// assert_eq!(queue.get_with_priority().await, Some(("default/changed", Priority::NORMAL)));
/// assert_eq!(queue.get().await, Some("default/a"));
/// # }
/// ```
///
/// # The same as the other queues
///
/// Dedup, exclusive processing (an item is never handed to two workers at once), re-adds
/// during processing (queued again at `done`, at the back of their priority), per-item backoff
/// through the [`RateLimiter`] (a rate-limited add of an item already ready or waiting asks the
/// limiter nothing and counts no failure), shutdown and drain (both discard the waiting
/// items), metrics (the [`QueueMetrics`](crate::QueueMetrics) hooks with priority), paused-time
/// tests, and the timer task of the [`DelayingQueue`](crate::DelayingQueue) with its
/// [runtime rules](crate::DelayingQueue#runtime). A cheap handle: clone it to share the queue.
///
/// # Where it differs from the plain queues
///
/// * **Order**: the highest priority first, FIFO within a priority; the plain queue is one
///   FIFO.
/// * **Re-adds keep the best of both**: an item added again while it waits keeps the *higher*
///   priority and the *earlier* ready time. A queued item whose priority rises moves to the
///   back of its new priority's items (controller-runtime's rule); a lower priority changes
///   nothing.
/// * **Ready or waiting, not both**: in the [`DelayingQueue`](crate::DelayingQueue) an item may
///   be queued and waiting at the same time, and is then handed out twice. Here a ready add of
///   a waiting item makes it ready now, and a delayed or rate-limited add of a ready item only
///   raises its priority.
/// * **Waiting items become ready in ready-time order**, each at the back of its priority, as
///   if added at that moment.
/// * **Re-adds during processing**: controller-runtime gives such an item its place from the
///   time of the re-add; here it is queued at its `done`, as in the plain queue.
/// * **`len`** counts the ready items waiting for a worker, as in the plain queue; the waiting
///   items are counted by [`num_waiting`](PriorityQueue::num_waiting).
///
/// # Cost
///
/// Adds, gets and dones cost about what the plain queue's do (one lock, adds that find it
/// busy leave their item for its holder): one FIFO per priority in use, found by a short scan.
/// Delayed and rate-limited adds wait for the lock; a rate-limited add takes it twice, asking
/// the limiter in between.
pub struct PriorityQueue<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<T> {
    shared: Arc<Shared<PriorityState<T>, (T, Priority)>>,
    /// Wakes the timer task: an earlier item arrived, the queue shut down or was dropped.
    wake: Arc<Notify>,
    timer: LazyTask,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Let the timer task notice that the queue is gone.
        self.wake.notify_one();
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> PriorityQueue<T> {
    /// An unnamed queue without metrics whose retries wait as `limiter` says; see
    /// [`default_controller_rate_limiter`](crate::default_controller_rate_limiter) for the
    /// usual choice, and [Runtime](crate::DelayingQueue#runtime) for where its timer runs.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A queue configured by `config` whose retries wait as `limiter` says.
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        let sink = config.queue_metrics();
        let this = Self {
            inner: Arc::new(Inner {
                shared: Shared::open(&config, sink),
                wake: Arc::new(Notify::new()),
                timer: LazyTask::new(config.runtime.clone()),
                limiter: Arc::new(limiter),
            }),
        };
        this.ensure_timer();
        this
    }

    /// The queue's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.inner.shared.name.as_deref()
    }

    /// Adds `item` now with [`Priority::NORMAL`]; see [`add_with`](PriorityQueue::add_with).
    pub fn add(&self, item: T) {
        self.inner.shared.add((item, Priority::NORMAL));
    }

    /// Adds `item` with [`Priority::NORMAL`] once `delay` has passed (at once if it is zero);
    /// see [`add_with`](PriorityQueue::add_with). Counts one retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_with(item, AddOptions::new().after(delay));
    }

    /// Records a failure of `item` and adds it with [`Priority::NORMAL`] once the rate
    /// limiter's delay has passed; see [`add_with`](PriorityQueue::add_with).
    pub fn add_rate_limited(&self, item: T) {
        self.add_with(item, AddOptions::new().rate_limited());
    }

    /// Adds `item` as `options` say: with their priority, now, after a delay, or after the
    /// rate limiter's delay.
    ///
    /// * Already waiting for a worker (or marked to be queued again on `done`): it keeps the
    ///   higher of the two priorities, and stays ready.
    /// * Waiting for its ready time: it keeps the higher priority and the earlier ready time
    ///   (a ready add makes it ready now).
    /// * Held by a worker and not waiting: a ready add marks it to be queued again on `done`,
    ///   a delayed one makes it wait.
    ///
    /// A rate-limited add asks the limiter (recording a failure) only when the item is
    /// neither ready nor waiting; a non-zero [`after`](AddOptions::after) then caps the
    /// limiter's delay. Dropped once the queue is shutting down. A ready add never waits for
    /// other threads; delayed and rate-limited adds take the queue's lock.
    pub fn add_with(&self, item: T, options: AddOptions) {
        let priority = options.priority;
        if options.rate_limited {
            self.add_limited(item, priority, options.after);
            return;
        }
        let Some(delay) = options.after else {
            self.inner.shared.add((item, priority));
            return;
        };
        if delay.is_zero() {
            if !self.inner.shared.is_shutting_down() {
                self.count_retry();
            }
            self.inner.shared.add((item, priority));
            return;
        }
        let at = ready_at(delay);
        let scheduled = self.locked(|state, adds| state.schedule(item, at, priority, adds));
        if let Some(scheduled) = scheduled {
            self.count_retry();
            self.after_schedule(&scheduled);
        }
    }

    /// A rate-limited add: hold the item (or find it ready or waiting), ask the limiter
    /// without the lock, then give the item its ready time.
    fn add_limited(&self, item: T, priority: Priority, cap: Option<Duration>) {
        let held = self.locked(|state, adds| state.hold_for_retry(&item, priority, adds));
        if held != Some(true) {
            return;
        }
        let mut delay = self.inner.limiter.when(&item);
        if let Some(cap) = cap.filter(|cap| !cap.is_zero()) {
            delay = delay.min(cap);
        }
        self.count_retry();
        let scheduled =
            self.locked(|state, adds| state.schedule_retry(item, delay, priority, adds));
        if let Some(scheduled) = scheduled {
            self.after_schedule(&scheduled);
        }
    }

    /// Runs `change` under the queue's lock unless the queue is shutting down (then `None`),
    /// after moving the inbox in, and reports its effects once the lock is released.
    fn locked<R>(
        &self,
        change: impl FnOnce(&mut PriorityState<T>, &mut PriorityAdds) -> R,
    ) -> Option<R> {
        let shared = &*self.inner.shared;
        let mut state = shared.state.lock();
        if state.shutting_down {
            return None;
        }
        let mut adds = PriorityAdds::default();
        shared.move_inbox(&mut state, &mut adds);
        let result = change(&mut state.store, &mut adds);
        shared.unlock_and_report(state, adds);
        Some(result)
    }

    fn after_schedule(&self, scheduled: &Schedule<T>) {
        if let Schedule::Later { wake } = scheduled {
            if *wake {
                self.inner.wake.notify_one();
            }
            self.ensure_timer();
        }
    }

    fn count_retry(&self) {
        if let Some(metrics) = &self.inner.shared.metrics {
            metrics.sink.retry();
        }
    }

    /// Clears the limiter's history of `item`; call it when the item was processed
    /// successfully (the worker still calls [`done`](PriorityQueue::done)).
    pub fn forget(&self, item: &T) {
        self.inner.limiter.forget(item);
    }

    /// How many failures of `item` the limiter has recorded.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.inner.limiter.num_requeues(item)
    }

    /// Whether `item` waits for its ready time.
    pub fn is_waiting(&self, item: &T) -> bool {
        self.inner.shared.state.lock().store.is_waiting(item)
    }

    /// The number of items waiting for their ready time (not yet ready).
    pub fn num_waiting(&self) -> usize {
        self.inner.shared.state.lock().store.num_waiting()
    }

    /// Waits for the highest-priority ready item and hands it to the caller, who must call
    /// [`done`](PriorityQueue::done) with it once processed; see
    /// [`Queue::get`](crate::Queue::get).
    // Not an `async fn`: the shared operation's future is handed out as is (no second state
    // machine around it), and its declared `Send` lets it be spawned even for borrowed items
    // such as `&'static str`, for which rustc cannot prove an `async fn`'s future `Send`.
    pub fn get(&self) -> impl Future<Output = Option<T>> + Send + '_ {
        // The timer starts when the future first runs: on a runtime even if the queue was
        // built outside one.
        self.inner
            .shared
            .get_with(|| self.ensure_timer(), |(item, _)| item)
    }

    /// [`get`](PriorityQueue::get), with the priority the item had, so that a worker can add
    /// it back (a retry, a requeue) with the same priority.
    // Not an `async fn`: the shared operation's future is handed out as is (no second state
    // machine around it), and its declared `Send` lets it be spawned even for borrowed items
    // such as `&'static str`, for which rustc cannot prove an `async fn`'s future `Send`.
    pub fn get_with_priority(&self) -> impl Future<Output = Option<(T, Priority)>> + Send + '_ {
        self.inner
            .shared
            .get_with(|| self.ensure_timer(), |taken| taken)
    }

    /// Marks `item` as processed; see [`Queue::done`](crate::Queue::done).
    pub fn done(&self, item: &T) {
        self.inner.shared.done(item);
    }

    /// The number of ready items waiting for a worker (not counting items being processed,
    /// nor items waiting for their ready time).
    pub fn len(&self) -> usize {
        self.inner.shared.len()
    }

    /// Whether no ready item is waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.shared.is_shutting_down()
    }

    /// Discards the waiting items and shuts down; see [`Queue::shut_down`](crate::Queue::shut_down).
    pub fn shut_down(&self) {
        self.inner.shared.shut_down();
        self.inner.wake.notify_one();
    }

    /// Discards the waiting items and shuts down at once, then returns the wait for the
    /// workers to finish everything ready and in flight; see
    /// [`Queue::shut_down_with_drain`](crate::Queue::shut_down_with_drain).
    pub fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
        let drained = self.inner.shared.shut_down_with_drain();
        self.inner.wake.notify_one();
        drained
    }

    #[inline]
    fn ensure_timer(&self) {
        self.inner.timer.ensure(|| {
            let weak = Arc::downgrade(&self.inner);
            let wake = Arc::clone(&self.inner.wake);
            run_timer(weak, wake)
        });
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Timed for Inner<T> {
    type Due = (T, Priority);

    /// Makes the due items ready under the queue's one lock (so `release` has nothing left).
    fn take_due(&self, due: &mut Vec<(T, Priority)>, plan: &mut Plan<'_>) -> Option<Next> {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let mut adds = PriorityAdds::default();
        shared.move_inbox(&mut state, &mut adds);
        let next = state.store.release_due(due, plan, &mut adds);
        shared.unlock_and_report(state, adds);
        next
    }

    fn release(&self, due: &mut Vec<(T, Priority)>) {
        due.clear();
    }
}

impl_queue_traits!(rate_limiting PriorityQueue);

impl<T: Eq + Hash + Clone + Send + Sync + 'static> PriorityWorkQueue for PriorityQueue<T> {
    fn add_with(&self, item: T, options: AddOptions) {
        PriorityQueue::add_with(self, item, options);
    }

    fn get_with_priority(&self) -> impl Future<Output = Option<(T, Priority)>> + Send + '_ {
        PriorityQueue::get_with_priority(self)
    }
}

impl<T> fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = &*self.inner.shared;
        let state = shared.state.lock();
        let (queued, in_flight, waiting) = state.store.counts();
        f.debug_struct("PriorityQueue")
            .field("name", &shared.name)
            .field("queued", &queued)
            .field("in_flight", &in_flight)
            .field("waiting", &waiting)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
