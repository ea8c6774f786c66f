//! The delaying queue: a [`Queue`] plus items that become ready later.

use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::config::QueueConfig;
use crate::metrics::QueueMetrics;
use crate::queue::Queue;
use crate::task::LazyTask;
use crate::waiting::{Schedule, TimerState, Waiting};

/// How far in the future a delay that overflows the clock is scheduled (about 30 years).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// A [`Queue`] that can also add an item after a delay ([`add_after`](DelayingQueue::add_after)).
///
/// Waiting items are kept in a min-heap ordered by ready time, deduplicated by item: an item
/// that is already waiting keeps the *earlier* of its two ready times. One background tokio
/// task with one timer, re-armed to the earliest ready time, moves items into the queue when
/// they are due (no periodic heartbeat, no task per item). Because tokio's timer has a
/// resolution of one millisecond, the task sleeps until one millisecond before the earliest
/// ready time and polls the clock (yielding between looks) for the rest: items are delivered
/// within microseconds of their ready time rather than one to two milliseconds after it, at
/// the cost of up to a millisecond of CPU per wake-up. Polling also keeps delivery on time
/// when every worker thread is busy, which otherwise delays tokio's timer itself (it is
/// serviced between tasks). Waiting does not interact with plain
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
        let queue = Queue::with_metrics(config, metrics.clone());
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
        let scheduled = waiting.insert(item, at);
        // Hand the lock straight to a timer task waiting for it: a producer adding in a tight
        // loop would otherwise take it back every time and keep due items from going out.
        MutexGuard::unlock_fair(waiting);
        self.after_schedule(scheduled);
    }

    /// Schedules `item` after `delay(&item)` unless it is already waiting, in which case
    /// `delay` is not called. The check and the insertion are atomic.
    pub(crate) fn add_after_unless_waiting(&self, item: T, delay: impl FnOnce(&T) -> Duration) {
        let mut waiting = self.inner.waiting.lock();
        let scheduled = waiting.insert_unless_waiting(item, delay, Instant::now);
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

/// The ready time of an item added now with `delay`, saturating far in the future.
fn ready_at(delay: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(delay)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// How long before an item's ready time the timer task stops sleeping and starts polling the
/// clock instead. tokio's timer has a resolution of 1 ms: it rounds a
/// deadline up to the next millisecond and may wake up to another millisecond after that, so
/// sleeping until the ready time itself would deliver about 1 ms late on average and up to
/// 2 ms late.
const POLL_WINDOW: Duration = Duration::from_millis(1);

/// The longest the timer task polls in a row, measured on the real clock. It bounds the CPU
/// spent polling (about one millisecond per wake-up at most), and it keeps tests with a paused
/// tokio clock (where polling would never see time pass) moving: the task then sleeps.
const MAX_POLL: Duration = Duration::from_millis(2);

/// What the timer task does next.
enum Next {
    /// Nothing waits: wait for a wake-up.
    Idle,
    /// The earliest item is due at this instant, within [`POLL_WINDOW`]: watch the clock,
    /// yielding to other tasks between looks.
    Poll(Instant),
    /// Sleep until this instant (or a wake-up).
    Sleep(Instant),
}

/// The single timer task: moves due items into the queue, sleeping until shortly before the
/// earliest ready time (then polling the clock for the rest, see [`POLL_WINDOW`]) or until
/// woken by an earlier item, a shutdown or the drop of the queue.
async fn run_timer<T>(weak: Weak<Inner<T>>, wake: Arc<Notify>)
where
    T: Eq + Hash + Clone + Send + Sync + 'static,
{
    let mut sleep = pin!(tokio::time::sleep_until(Instant::now()));
    let mut due = Vec::new();
    let mut polling_since: Option<std::time::Instant> = None;
    loop {
        let next = {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let next = {
                let mut waiting = inner.waiting.lock();
                if waiting.closed {
                    return;
                }
                let now = Instant::now();
                let next = match waiting.pop_due(now, &mut due) {
                    None => Next::Idle,
                    Some(at) => {
                        if !due.is_empty() {
                            polling_since = None;
                        }
                        let near = at.saturating_duration_since(now) <= POLL_WINDOW;
                        let may_poll = polling_since
                            .get_or_insert_with(std::time::Instant::now)
                            .elapsed()
                            < MAX_POLL;
                        if near && may_poll {
                            Next::Poll(at)
                        } else if near {
                            Next::Sleep(at)
                        } else {
                            Next::Sleep(at.checked_sub(POLL_WINDOW).unwrap_or(at))
                        }
                    }
                };
                // Adds that come after this point see the state and wake the task if needed;
                // `notify_one` keeps a permit if the task is not waiting yet, so that wake-up
                // is not lost however late the task starts waiting.
                waiting.timer = match next {
                    Next::Idle => TimerState::Idle,
                    Next::Poll(deadline) | Next::Sleep(deadline) => TimerState::Sleeping(deadline),
                };
                next
            };
            if !due.is_empty() {
                inner.queue.add_all(due.drain(..));
            }
            next
        };
        match next {
            Next::Idle => {
                polling_since = None;
                wake.notified().await;
            }
            Next::Poll(at) => {
                // Watch the clock without taking the lock (adds keep using it meanwhile); an
                // add of an earlier item wakes `notified` and ends the watch.
                let mut notified = pin!(wake.notified());
                notified.as_mut().enable();
                loop {
                    tokio::task::yield_now().await;
                    let timed_out = polling_since.is_some_and(|since| since.elapsed() >= MAX_POLL);
                    if Instant::now() >= at || timed_out || notified_now(notified.as_mut()) {
                        break;
                    }
                }
            }
            Next::Sleep(deadline) => {
                polling_since = None;
                sleep.as_mut().reset(deadline);
                tokio::select! {
                    () = &mut sleep => {}
                    () = wake.notified() => {}
                }
            }
        }
    }
}

/// Whether `notified` has completed (without waiting).
fn notified_now(notified: std::pin::Pin<&mut tokio::sync::futures::Notified<'_>>) -> bool {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    notified.poll(&mut cx).is_ready()
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let waiting = self.inner.waiting.lock().len();
        f.debug_struct("DelayingQueue")
            .field("queue", &self.inner.queue)
            .field("waiting", &waiting)
            .finish()
    }
}
