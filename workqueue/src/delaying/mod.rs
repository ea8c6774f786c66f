//! The delaying queue: a [`Queue`] plus items that become ready later.

pub(crate) mod timer;
pub(crate) mod waiting;

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::config::QueueConfig;
use crate::delaying::timer::{Next, Plan, Timed, ready_at, run_timer};
use crate::delaying::waiting::{Schedule, Waiting};
use crate::interface::impl_queue_traits;
use crate::metrics::QueueMetrics;
use crate::queue::Queue;
use crate::task::LazyTask;

/// A [`Queue`] that can also add an item after a delay ([`add_after`](DelayingQueue::add_after)).
///
/// Waiting items are kept in a min-heap ordered by ready time, deduplicated by item: an item
/// that is already waiting keeps the *earlier* of its two ready times. One background tokio
/// task with one timer, re-armed to the earliest ready time, moves items into the queue when
/// they are due (no periodic heartbeat, no task per item; the priority queue uses the same
/// task). Because tokio's timer has a resolution of one millisecond, the task sleeps until one
/// millisecond before the earliest ready time and polls the clock (yielding between looks) for
/// the rest: items are delivered within microseconds of their ready time rather than one to
/// two milliseconds after it, at the cost of up to a millisecond of CPU per wake-up. Polling
/// also keeps delivery on time when every worker thread is busy, which otherwise delays
/// tokio's timer itself (it is serviced between tasks). Waiting does not interact with plain
/// adds: an item may be queued and waiting at the same time.
///
/// # Runtime
///
/// The timer task runs on the runtime given with [`QueueConfig::runtime`], else on the
/// runtime of the first call made from inside one (construction, `add_after` or `get`). A
/// queue built outside a runtime therefore never panics: its waiting items are delivered once
/// it is used from a runtime. The task holds only a weak reference: it ends when the queue
/// shuts down or when the last handle is dropped.
///
/// Delivery is as punctual as tokio's timer (millisecond resolution) and scheduler allow. A
/// task that calls `add_after` in a long loop without ever awaiting may delay deliveries until
/// it yields: tokio parks a task woken from a worker thread in that worker's LIFO slot, which
/// other workers do not steal, so the timer task (and a worker it wakes) waits for the loop.
///
/// Shutting down (with or without drain) discards the waiting items.
pub struct DelayingQueue<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<T> {
    queue: Queue<T>,
    waiting: Mutex<Waiting<T>>,
    /// Wakes the timer task: an earlier item arrived, the queue shut down or was dropped.
    wake: Arc<Notify>,
    timer: LazyTask,
    metrics: Option<Arc<dyn QueueMetrics>>,
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Let the timer task notice that the queue is gone.
        self.wake.notify_one();
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// An unnamed delaying queue without metrics; see [Runtime](DelayingQueue#runtime).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A delaying queue configured by `config`.
    pub fn with_config(config: QueueConfig) -> Self {
        let metrics = config.queue_metrics();
        let timer = LazyTask::new(config.runtime.clone());
        let queue = Queue::with_metrics(&config, metrics.clone());
        let this = Self {
            inner: Arc::new(Inner {
                queue,
                waiting: Mutex::new(Waiting::new()),
                wake: Arc::new(Notify::new()),
                timer,
                metrics,
            }),
        };
        this.ensure_timer();
        this
    }

    /// The queue's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.inner.queue.name()
    }

    /// Adds `item` now; see [`Queue::add`].
    pub fn add(&self, item: T) {
        self.inner.queue.add(item);
    }

    /// Adds `item` once `delay` has passed; at once if `delay` is zero.
    ///
    /// If the item is already waiting, it keeps the earlier of the two ready times. Ignored
    /// once the queue is shutting down. Counts one retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        if delay.is_zero() {
            if let Some(metrics) = &self.inner.metrics
                && !self.inner.queue.is_shutting_down()
            {
                metrics.retry();
            }
            self.inner.queue.add(item);
            return;
        }
        let at = ready_at(delay);
        let mut waiting = self.inner.waiting.lock();
        let scheduled = waiting.insert(item, at, ());
        // Hand the lock straight to a timer task waiting for it: a producer adding in a tight
        // loop would otherwise take it back every time and keep due items from going out.
        MutexGuard::unlock_fair(waiting);
        self.after_schedule(scheduled);
    }

    /// Schedules `item` after `delay(&item)` unless it is already waiting, in which case
    /// `delay` is not called. The check and the insertion are atomic.
    pub(crate) fn add_after_unless_waiting(&self, item: T, delay: impl FnOnce(&T) -> Duration) {
        let mut waiting = self.inner.waiting.lock();
        let scheduled = waiting.insert_unless_waiting(item, (), delay, Instant::now);
        MutexGuard::unlock_fair(waiting);
        self.after_schedule(scheduled);
    }

    #[inline]
    fn after_schedule(&self, scheduled: Schedule<T>) {
        if let Some(metrics) = &self.inner.metrics
            && matches!(scheduled, Schedule::Now(_) | Schedule::Later { .. })
        {
            metrics.retry();
        }
        match scheduled {
            Schedule::Closed | Schedule::AlreadyWaiting => {}
            Schedule::Now(item) => self.inner.queue.add(item),
            Schedule::Later { wake } => {
                if wake {
                    self.inner.wake.notify_one();
                }
                self.ensure_timer();
            }
        }
    }

    /// Whether `item` is waiting for its ready time.
    pub fn is_waiting(&self, item: &T) -> bool {
        self.inner.waiting.lock().contains(item)
    }

    /// The number of items waiting for their ready time (not yet in the queue).
    pub fn num_waiting(&self) -> usize {
        self.inner.waiting.lock().len()
    }

    /// Waits for an item; see [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.ensure_timer();
        self.inner.queue.get().await
    }

    /// Marks `item` as processed; see [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.inner.queue.done(item);
    }

    /// The number of items ready and waiting for a worker; see [`Queue::len`].
    pub fn len(&self) -> usize {
        self.inner.queue.len()
    }

    /// Whether no item is ready and waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.inner.queue.is_empty()
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.queue.is_shutting_down()
    }

    /// Discards the waiting items and shuts the queue down; see [`Queue::shut_down`].
    pub fn shut_down(&self) {
        self.close_waiting();
        self.inner.queue.shut_down();
    }

    /// Discards the waiting items, shuts the queue down and waits for the queue to drain;
    /// see [`Queue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.close_waiting();
        self.inner.queue.shut_down_with_drain().await;
    }

    fn close_waiting(&self) {
        self.inner.waiting.lock().close();
        self.inner.wake.notify_one();
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
    type Due = (T, ());

    fn take_due(&self, due: &mut Vec<(T, ())>, plan: &mut Plan<'_>) -> Option<Next> {
        self.waiting.lock().take_due(due, plan)
    }

    fn release(&self, due: &mut Vec<(T, ())>) {
        self.queue.add_all(due.drain(..).map(|(item, ())| item));
    }
}

impl_queue_traits!(delaying DelayingQueue);

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let waiting = self.inner.waiting.lock().len();
        f.debug_struct("DelayingQueue")
            .field("queue", &self.inner.queue)
            .field("waiting", &waiting)
            .finish()
    }
}
