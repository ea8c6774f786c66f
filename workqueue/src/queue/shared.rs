//! What the handles of one [`Queue`](crate::Queue) or [`PriorityQueue`](crate::PriorityQueue)
//! share, and the hand-off between adders and workers around its lock.
//!
//! [`Shared`] holds the queue's state behind one lock (its [`QueueState`], the plain queue's
//! store or the priority queue's, and the shutdown flags), the [`Inbox`] where an add that
//! finds the lock taken leaves its item, the workers sleeping in `get` ([`Sleepers`]), and the
//! metrics hook. Every operation takes the lock once, moves the inbox into
//! the state first, and reports its [`Effects`] (a worker to wake, adds to count) only after
//! releasing the lock. The operations themselves are in `ops`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics::{QueueMetrics, UNFINISHED_WORK_UPDATE_PERIOD};
use crate::queue::inbox::Inbox;
use crate::queue::lock::{Mutex, MutexGuard};
use crate::queue::sleepers::{Registration, Sleepers};
use crate::queue::state::{Adds, QueueState};
use crate::task::LazyTask;

/// Capacity kept by the inbox buffers between bursts.
const INBOX_CAPACITY: usize = 4096;

/// The queue behind the handles of one queue: its state `S` and the inbox of the entries `E`
/// that adds hand in (`S::Entry`, a parameter of its own so that the handles need no bounds).
pub(crate) struct Shared<S, E> {
    pub(crate) state: Mutex<State<S, E>>,
    /// Adds that found `state` locked by another thread; whoever holds `state` next moves
    /// their items into the store.
    pub(crate) inbox: Inbox<E>,
    /// Workers sleeping in `get`; they register under the `state` lock.
    pub(crate) sleepers: Sleepers,
    /// Wakes callers of `shut_down_with_drain`.
    pub(crate) drained: Notify,
    pub(crate) name: Option<Box<str>>,
    pub(crate) metrics: Option<MetricsHook>,
}

/// Where a queue with metrics reports, and its task that refreshes the unfinished-work gauges.
pub(crate) struct MetricsHook {
    pub(crate) sink: Arc<dyn QueueMetrics>,
    pub(crate) refresh: LazyTask,
}

/// The state under the queue's lock.
pub(crate) struct State<S, E> {
    pub(crate) store: S,
    pub(crate) shutting_down: bool,
    /// A `shut_down_with_drain` is waiting (cleared by `shut_down`).
    pub(crate) draining: bool,
    /// An empty buffer swapped with the inbox's when moving its items.
    spare: Vec<E>,
}

impl<S: QueueState> State<S, S::Entry> {
    /// Adds `entry` to the store, unless the queue is shutting down.
    #[inline]
    pub(crate) fn add(&mut self, entry: S::Entry, adds: &mut S::Adds) {
        if !self.shutting_down {
            self.store.add(entry, adds);
        }
    }
}

/// What happened under the lock that must be reported after it: adds to report to metrics,
/// and whether a sleeping worker should be woken.
#[derive(Default)]
pub(crate) struct Effects<A> {
    pub(crate) adds: A,
    pub(crate) wake: bool,
}

impl<S: QueueState> Shared<S, S::Entry> {
    /// An open, empty queue called `name`, reporting to `metrics` if given.
    pub(crate) fn new(name: Option<Box<str>>, metrics: Option<MetricsHook>) -> Self {
        Self {
            state: Mutex::new(State {
                store: S::new(metrics.is_some()),
                shutting_down: false,
                draining: false,
                spare: Vec::new(),
            }),
            inbox: Inbox::new(),
            sleepers: Sleepers::new(),
            drained: Notify::new(),
            name,
            metrics,
        }
    }

    /// Moves the inbox's items into the store (they were accepted before any shutdown),
    /// recording in `adds` those that were genuinely new. Returns whether there were any.
    #[inline]
    pub(crate) fn move_inbox(&self, state: &mut State<S, S::Entry>, adds: &mut S::Adds) -> bool {
        if !self.inbox.is_pending() {
            return false;
        }
        self.move_inbox_slow(state, adds);
        true
    }

    #[cold]
    fn move_inbox_slow(&self, state: &mut State<S, S::Entry>, adds: &mut S::Adds) {
        self.inbox.take_into(&mut state.spare);
        let State { store, spare, .. } = state;
        for entry in spare.drain(..) {
            store.add(entry, adds);
        }
        if spare.capacity() > INBOX_CAPACITY {
            spare.shrink_to(INBOX_CAPACITY);
        }
    }

    /// Whether a sleeping worker should be woken: work is queued and someone sleeps.
    #[inline]
    pub(crate) fn should_wake(&self, state: &State<S, S::Entry>) -> bool {
        state.store.queued() > 0 && self.sleepers.count() > 0
    }

    /// Releases the lock, then reports `adds` and wakes a sleeping worker if work is queued.
    #[inline]
    pub(crate) fn unlock_and_report(
        &self,
        state: MutexGuard<'_, State<S, S::Entry>>,
        adds: S::Adds,
    ) {
        let wake = self.should_wake(&state);
        drop(state);
        self.report(Effects { adds, wake });
    }

    /// Reports `effects` once the lock is released.
    #[inline]
    pub(crate) fn report(&self, effects: Effects<S::Adds>) {
        if effects.wake {
            self.sleepers.wake_one();
        }
        if let Some(metrics) = &self.metrics {
            effects.adds.report(&*metrics.sink);
        }
    }

    /// Reports the get of `taken`, which waited `queued_for` (known only with metrics).
    #[inline]
    pub(crate) fn report_get(&self, taken: &S::Taken, queued_for: Option<Duration>) {
        if let (Some(metrics), Some(queued_for)) = (&self.metrics, queued_for) {
            S::report_get(taken, &*metrics.sink, queued_for);
        }
    }

    /// Leaves `entry` in the inbox for the thread that holds the state, waking a sleeping
    /// worker if this add is the one that must.
    pub(crate) fn add_busy(&self, entry: S::Entry) {
        if self.inbox.leave(entry) {
            self.sleepers.wake_one();
        }
    }

    /// Waits, sleeping until woken, for an item to hand out; `None` once the queue is shutting
    /// down and empty. Cancel-safe: a dropped wait deregisters its worker, and passes on a
    /// wake-up that had already claimed it.
    pub(crate) async fn wait_for_item(&self) -> Option<S::Taken> {
        let mut registration = Registration::new(&self.sleepers);
        loop {
            let mut effects = Effects::<S::Adds>::default();
            let mut queued_for = None;
            let (item, closed) = {
                let mut state = self.state.lock();
                loop {
                    self.move_inbox(&mut state, &mut effects.adds);
                    let item = state.store.take(&mut queued_for);
                    if item.is_some() {
                        effects.wake = self.should_wake(&state);
                        break (item, false);
                    }
                    if state.shutting_down {
                        break (None, true);
                    }
                    // Register before the last look at the inbox (both sides SeqCst): an add
                    // that leaves its item there after this look sees the sleeper and wakes it.
                    registration.register();
                    if self.inbox.is_pending() {
                        // An add left an item meanwhile: take it instead of sleeping.
                        registration.withdraw();
                        continue;
                    }
                    break (None, false);
                }
            };
            self.report(effects);
            if item.is_some() {
                if let Some(taken) = &item {
                    self.report_get(taken, queued_for);
                }
                return item;
            }
            if closed {
                return None;
            }
            registration.sleep().await;
        }
    }

    /// Marks the queue as shutting down (and draining, if `drain`); returns the effects to
    /// report.
    pub(crate) fn close(&self, drain: bool) -> Effects<S::Adds> {
        let mut state = self.state.lock();
        state.shutting_down = true;
        state.draining = drain;
        state.store.close();
        // Close the inbox, then take what it holds: those adds came before the shutdown.
        self.inbox.close();
        let mut adds = S::Adds::default();
        self.move_inbox(&mut state, &mut adds);
        Effects { adds, wake: false }
    }
}

/// Periodically reports the unfinished-work gauges of a queue with metrics; ends when the
/// queue is dropped, or once it is shut down with nothing in flight.
pub(crate) async fn refresh_unfinished<S: QueueState>(weak: Weak<Shared<S, S::Entry>>) {
    let mut ticks = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(shared) = weak.upgrade() else {
            return;
        };
        let Some(metrics) = &shared.metrics else {
            return;
        };
        let (unfinished, longest, finished) = {
            let state = shared.state.lock();
            let (unfinished, longest) = state.store.unfinished(Instant::now());
            (
                unfinished,
                longest,
                state.shutting_down && state.store.is_empty(),
            )
        };
        metrics.sink.update_unfinished(unfinished, longest);
        if finished {
            return;
        }
    }
}
