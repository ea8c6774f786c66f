//! The basic work queue: dedup while waiting, exclusive while processing.

use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::config::QueueConfig;
use crate::lock::Mutex;
use crate::metrics::{QueueMetrics, UNFINISHED_WORK_UPDATE_PERIOD};
use crate::store::{Added, Done, Store};
use crate::task::LazyTask;

/// A work queue shared by event handlers (which [`add`](Queue::add) keys) and workers (which
/// [`get`](Queue::get) a key, process it and call [`done`](Queue::done)).
///
/// Guarantees, for every item:
///
/// * **Dedup**: an item waiting to be processed is queued at most once; adding it again is a
///   no-op.
/// * **Exclusive processing**: an item handed to a worker is not handed to any other worker
///   until that worker calls [`done`](Queue::done).
/// * **No lost update**: an item added while it is being processed is queued again right after
///   its `done`.
/// * **Shutdown**: after [`shut_down`](Queue::shut_down), adds are dropped but
///   [`get`](Queue::get) keeps returning what is queued; it returns `None` once the queue is
///   empty.
///
/// A stray `done` for an item that is not being processed is ignored (client-go would queue
/// a duplicate), and [`shut_down_with_drain`](Queue::shut_down_with_drain) waits until both
/// the queue and the in-flight set are empty (client-go may return while items are queued).
///
/// `Queue` is a cheap handle (an `Arc` inside): clone it to share one queue among workers
/// and event handlers. Items are handed out in FIFO order of their (first) add.
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Adds that found `state` locked by another thread. Rather than wait, such an add leaves
    /// its item here, and whoever holds `state` next moves it into the store. This keeps a
    /// producer from queueing behind busy workers (and the workers from waiting on it).
    inbox: Mutex<Inbox<T>>,
    /// Whether `inbox` holds items; read without its lock.
    inbox_pending: AtomicBool,
    /// Workers registered as sleeping in `get`; changed only under the `state` lock.
    sleeping: AtomicUsize,
    /// Wakes workers blocked in `get`.
    getters: Notify,
    /// Wakes callers of `shut_down_with_drain`.
    drained: Notify,
    name: Option<Box<str>>,
    metrics: Option<MetricsHook>,
}

struct MetricsHook {
    sink: Arc<dyn QueueMetrics>,
    refresh: LazyTask,
}

struct Inbox<T> {
    items: Vec<T>,
    /// Set (under the `state` lock, after a last move) by shutdown: adds are dropped.
    closed: bool,
}

struct State<T> {
    store: Store<T>,
    shutting_down: bool,
    /// A `shut_down_with_drain` is waiting (cleared by `shut_down`).
    draining: bool,
    /// An empty buffer swapped with the inbox's when moving its items.
    spare: Vec<T>,
}

/// Capacity kept by the inbox buffers between bursts.
const INBOX_CAPACITY: usize = 4096;

impl<T: Eq + Hash + Clone> State<T> {
    #[inline]
    fn add(&mut self, item: T) -> Added {
        if self.shutting_down {
            return Added::Ignored;
        }
        self.store.add(item)
    }
}

/// What happened under the lock that must be reported after it: adds to report to metrics,
/// and whether a sleeping worker should be woken.
#[derive(Default)]
struct Effects {
    adds: usize,
    wake: bool,
}

impl<T: Eq + Hash + Clone> Shared<T> {
    /// Moves the inbox's items into the store (they were accepted before any shutdown).
    /// Returns how many were genuinely new.
    #[inline]
    fn move_inbox(&self, state: &mut State<T>) -> usize {
        if !self.inbox_pending.load(Ordering::SeqCst) {
            return 0;
        }
        self.move_inbox_slow(state)
    }

    #[cold]
    fn move_inbox_slow(&self, state: &mut State<T>) -> usize {
        {
            let mut inbox = self.inbox.lock();
            self.inbox_pending.store(false, Ordering::SeqCst);
            std::mem::swap(&mut inbox.items, &mut state.spare);
        }
        let State { store, spare, .. } = state;
        let mut adds = 0;
        for item in spare.drain(..) {
            if store.add(item) != Added::Ignored {
                adds += 1;
            }
        }
        if spare.capacity() > INBOX_CAPACITY {
            spare.shrink_to(INBOX_CAPACITY);
        }
        adds
    }

    /// Whether a sleeping worker should be woken: work is queued and someone sleeps.
    #[inline]
    fn should_wake(&self, state: &State<T>) -> bool {
        state.store.queued() > 0 && self.sleeping.load(Ordering::SeqCst) > 0
    }

    /// Reports `effects` once the lock is released.
    #[inline]
    fn report(&self, effects: Effects) {
        if effects.wake {
            self.getters.notify_one();
        }
        if let Some(metrics) = &self.metrics {
            for _ in 0..effects.adds {
                metrics.sink.add();
            }
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Queue<T> {
    /// An unnamed queue without metrics. Needs no runtime.
    pub fn new() -> Self {
        Self::build(None, None)
    }

    /// A queue configured by `config`; it has metrics if `config` names it and installs a
    /// provider.
    pub fn with_config(config: QueueConfig) -> Self {
        let sink = config.queue_metrics();
        Self::with_metrics(config, sink)
    }

    /// A queue configured by `config` reporting to `sink` (already made from `config`).
    pub(crate) fn with_metrics(config: QueueConfig, sink: Option<Arc<dyn QueueMetrics>>) -> Self {
        let metrics = sink.map(|sink| MetricsHook {
            sink,
            refresh: LazyTask::new(config.runtime.clone()),
        });
        let queue = Self::build(config.name.map(String::into_boxed_str), metrics);
        queue.ensure_refresh();
        queue
    }

    fn build(name: Option<Box<str>>, metrics: Option<MetricsHook>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    store: Store::new(metrics.is_some()),
                    shutting_down: false,
                    draining: false,
                    spare: Vec::new(),
                }),
                inbox: Mutex::new(Inbox {
                    items: Vec::new(),
                    closed: false,
                }),
                inbox_pending: AtomicBool::new(false),
                sleeping: AtomicUsize::new(0),
                getters: Notify::new(),
                drained: Notify::new(),
                name,
                metrics,
            }),
        }
    }

    /// The queue's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.shared.name.as_deref()
    }

    /// Marks `item` as needing processing.
    ///
    /// A no-op if the item is already queued. If a worker holds it, it is queued again when
    /// that worker calls [`done`](Queue::done). Dropped silently once the queue is shutting
    /// down. Never waits for other threads: if the queue is busy, the item is left for the
    /// thread that holds it.
    pub fn add(&self, item: T) {
        let shared = &*self.shared;
        let Some(mut state) = shared.state.try_lock() else {
            self.add_busy(item);
            return;
        };
        let mut adds = shared.move_inbox(&mut state);
        let added = state.add(item);
        if added != Added::Ignored {
            adds += 1;
        }
        let wake = shared.should_wake(&state);
        drop(state);
        shared.report(Effects { adds, wake });
    }

    /// Leaves `item` in the inbox for the thread that holds the state.
    fn add_busy(&self, item: T) {
        let shared = &*self.shared;
        {
            let mut inbox = shared.inbox.lock();
            if inbox.closed {
                return;
            }
            inbox.items.push(item);
            // Already flagged (and not moved since, as moves happen under this lock): the add
            // that raised the flag has already woken a sleeper or been seen by it.
            if shared.inbox_pending.load(Ordering::Relaxed) {
                return;
            }
            shared.inbox_pending.store(true, Ordering::SeqCst);
        }
        // A worker registers as sleeping before it looks at `inbox_pending` one last time
        // (both SeqCst), so either it sees the item or this sees it sleeping.
        if shared.sleeping.load(Ordering::SeqCst) > 0 {
            shared.getters.notify_one();
        }
    }

    /// Adds every item under one lock (used by the delaying queue's timer).
    pub(crate) fn add_all(&self, items: impl Iterator<Item = T>) {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let mut adds = shared.move_inbox(&mut state);
        for item in items {
            if state.add(item) != Added::Ignored {
                adds += 1;
            }
        }
        let wake = shared.should_wake(&state);
        drop(state);
        shared.report(Effects { adds, wake });
    }

    /// Waits for an item and hands it to the caller, who must call [`done`](Queue::done)
    /// with it once processed.
    ///
    /// Returns `None` once the queue is shutting down and empty. After a shutdown, items still
    /// queued are returned first. Cancel-safe: dropping the future loses no item.
    ///
    /// Takes part in tokio's cooperative scheduling: a worker that keeps finding items ready
    /// yields to the other tasks of its thread now and then, as with tokio's own channels.
    pub async fn get(&self) -> Option<T> {
        tokio::task::coop::consume_budget().await;
        self.ensure_refresh();
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let adds = shared.move_inbox(&mut state);
        // The item goes straight from the store to the caller, not re-wrapped on the way:
        // every move of a fresh value between differently shaped enums costs a stall.
        let mut queued_for = None;
        let item = state.store.take(&mut queued_for);
        let closed = state.shutting_down;
        // Pass the baton: more work and a sleeping worker means wake it.
        let wake = shared.should_wake(&state);
        drop(state);
        shared.report(Effects { adds, wake });
        if item.is_some() {
            self.report_get(queued_for);
            return item;
        }
        if closed {
            return None;
        }
        self.get_slow().await
    }

    #[inline]
    fn report_get(&self, queued_for: Option<Duration>) {
        if let (Some(metrics), Some(queued_for)) = (&self.shared.metrics, queued_for) {
            metrics.sink.get(queued_for);
        }
    }

    async fn get_slow(&self) -> Option<T> {
        let shared = &*self.shared;
        let mut registration = Sleeping {
            shared,
            registered: false,
        };
        loop {
            let mut notified = pin!(shared.getters.notified());
            // Register before looking at the state so that no add between the look and the
            // await can be missed.
            notified.as_mut().enable();
            let mut effects = Effects::default();
            let mut queued_for = None;
            let (item, closed) = {
                let mut state = shared.state.lock();
                if registration.registered {
                    shared.sleeping.fetch_sub(1, Ordering::SeqCst);
                    registration.registered = false;
                }
                loop {
                    effects.adds += shared.move_inbox(&mut state);
                    let item = state.store.take(&mut queued_for);
                    if item.is_some() {
                        effects.wake = shared.should_wake(&state);
                        break (item, false);
                    }
                    if state.shutting_down {
                        break (None, true);
                    }
                    shared.sleeping.fetch_add(1, Ordering::SeqCst);
                    if shared.inbox_pending.load(Ordering::SeqCst) {
                        // An add left an item meanwhile: take it instead of sleeping.
                        shared.sleeping.fetch_sub(1, Ordering::SeqCst);
                        continue;
                    }
                    registration.registered = true;
                    break (None, false);
                }
            };
            shared.report(effects);
            if item.is_some() {
                self.report_get(queued_for);
                return item;
            }
            if closed {
                return None;
            }
            notified.as_mut().await;
        }
    }

    /// Marks `item` as processed by the worker that got it.
    ///
    /// If the item was added again meanwhile, it is queued now. A `done` for an item that is
    /// not being processed is ignored.
    pub fn done(&self, item: &T) {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let adds = shared.move_inbox(&mut state);
        let (done, worked_for) = state.store.done(item);
        let wake = shared.should_wake(&state);
        let drained = done != Done::Stray && state.draining && state.store.is_empty();
        drop(state);
        shared.report(Effects { adds, wake });
        if done == Done::Stray {
            tracing::debug!(
                queue = shared.name.as_deref(),
                "done for an item that is not being processed: ignored"
            );
            return;
        }
        if drained {
            shared.drained.notify_waiters();
        }
        if let (Some(metrics), Some(worked_for)) = (&shared.metrics, worked_for) {
            metrics.sink.done(worked_for);
        }
    }

    /// The number of items waiting for a worker (not counting items being processed).
    pub fn len(&self) -> usize {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let adds = shared.move_inbox(&mut state);
        let len = state.store.queued();
        let wake = adds > 0 && shared.should_wake(&state);
        drop(state);
        shared.report(Effects { adds, wake });
        len
    }

    /// Whether no item is waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether [`shut_down`](Queue::shut_down) or
    /// [`shut_down_with_drain`](Queue::shut_down_with_drain) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }

    /// Marks the queue as shutting down; returns the effects to report.
    fn close(&self, drain: bool) -> Effects {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        state.shutting_down = true;
        state.draining = drain;
        // Close the inbox, then take what it holds: those adds came before the shutdown.
        shared.inbox.lock().closed = true;
        let adds = shared.move_inbox(&mut state);
        Effects { adds, wake: false }
    }

    /// Stops accepting adds. Workers still get what is queued, then `None`.
    ///
    /// Also ends any [`shut_down_with_drain`](Queue::shut_down_with_drain) that is waiting.
    pub fn shut_down(&self) {
        let effects = self.close(false);
        self.shared.report(effects);
        self.shared.getters.notify_waiters();
        self.shared.drained.notify_waiters();
    }

    /// Stops accepting adds, then waits until every queued item has been handed out and every
    /// handed-out item is [`done`](Queue::done).
    ///
    /// Workers must keep calling `get` and `done` for this to return. A
    /// [`shut_down`](Queue::shut_down) from elsewhere cuts the wait short.
    pub async fn shut_down_with_drain(&self) {
        let effects = self.close(true);
        self.shared.report(effects);
        self.shared.getters.notify_waiters();
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            notified.as_mut().enable();
            {
                let state = self.shared.state.lock();
                if !state.draining || state.store.is_empty() {
                    return;
                }
            }
            notified.await;
        }
    }

    fn ensure_refresh(&self) {
        if let Some(metrics) = &self.shared.metrics {
            let weak = Arc::downgrade(&self.shared);
            metrics.refresh.ensure(|| refresh_unfinished(weak));
        }
    }
}

/// Deregisters a sleeping `get` that is dropped before it was woken.
struct Sleeping<'a, T> {
    shared: &'a Shared<T>,
    registered: bool,
}

impl<T> Drop for Sleeping<'_, T> {
    fn drop(&mut self) {
        if self.registered {
            // Under the lock, like every change of `sleeping`.
            let _state = self.shared.state.lock();
            self.shared.sleeping.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Periodically reports the unfinished-work gauges of a queue with metrics; ends when the
/// queue is dropped, or once it is shut down with nothing in flight.
async fn refresh_unfinished<T>(weak: Weak<Shared<T>>) {
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

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.shared.name)
            .field("queued", &state.store.queued())
            .field("in_flight", &(state.store.len() - state.store.queued()))
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use parking_lot::Mutex;

    use super::Queue;
    use crate::config::QueueConfig;
    use crate::metrics::{MetricsProvider, QueueMetrics};

    /// Whether `future` is still pending after the runtime has run every other task.
    async fn still_pending<F: std::future::Future>(future: F) -> bool {
        tokio::time::timeout(Duration::from_secs(3600), future)
            .await
            .is_err()
    }

    #[tokio::test(start_paused = true)]
    async fn hands_out_items_in_fifo_order() {
        let queue = Queue::new();
        for item in ["a", "b", "c"] {
            queue.add(item);
        }
        assert_eq!(queue.len(), 3);
        for expected in ["a", "b", "c"] {
            let item = queue.get().await;
            assert_eq!(item, Some(expected));
            queue.done(&expected);
        }
        assert!(queue.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn queued_item_is_stored_once() {
        let queue = Queue::new();
        queue.add("a");
        queue.add("a");
        queue.add("b");
        queue.add("a");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert!(still_pending(queue.get()).await);
    }

    #[tokio::test(start_paused = true)]
    async fn item_in_flight_is_not_handed_out_again_until_done() {
        let queue = Queue::new();
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        queue.add("a");
        queue.add("a");
        // Dirty but held by a worker: not queued, so no second worker can get it.
        assert_eq!(queue.len(), 0);
        assert!(still_pending(queue.get()).await);
        queue.done(&"a");
        // Added while processing: queued again, exactly once, right after done.
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert!(queue.is_empty());
        assert!(still_pending(queue.get()).await);
    }

    #[tokio::test(start_paused = true)]
    async fn item_done_without_readd_is_not_requeued() {
        let queue = Queue::new();
        queue.add(1);
        assert_eq!(queue.get().await, Some(1));
        queue.done(&1);
        assert!(queue.is_empty());
        queue.add(1);
        assert_eq!(queue.get().await, Some(1));
    }

    #[tokio::test(start_paused = true)]
    async fn stray_done_is_ignored() {
        let queue = Queue::new();
        // Unknown item.
        queue.done(&"x");
        // Queued, not in flight.
        queue.add("a");
        queue.done(&"a");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        // In flight and dirty: the first done requeues, a second (stray) done must not
        // queue a duplicate (client-go bug, kubernetes PR #141079).
        queue.add("a");
        queue.done(&"a");
        queue.done(&"a");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        queue.done(&"a");
        assert!(queue.is_empty());
        assert!(still_pending(queue.get()).await);
    }

    #[tokio::test(start_paused = true)]
    async fn done_finds_any_in_flight_item_not_only_the_last_handed_out() {
        let queue = Queue::new();
        for item in ["a", "b", "c"] {
            queue.add(item);
        }
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        queue.add("a");
        // "b" was handed out last; "a" is found by lookup and queued again.
        queue.done(&"a");
        assert_eq!(queue.len(), 2);
        queue.done(&"b");
        queue.done(&"b");
        assert_eq!(queue.get().await, Some("c"));
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        // The node "a" used is free and then reused by "d", which is queued, not in flight:
        // neither a done for "d" nor one for "a" may release it.
        queue.add("d");
        queue.done(&"d");
        queue.done(&"a");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("d"));
        queue.done(&"d");
        queue.done(&"c");
        assert!(queue.is_empty());
        assert!(still_pending(queue.get()).await);
    }

    #[tokio::test(start_paused = true)]
    async fn sleeping_worker_is_woken_by_add() {
        let queue = Queue::new();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        queue.add(7);
        assert_eq!(worker.await.ok(), Some(Some(7)));
    }

    #[tokio::test(start_paused = true)]
    async fn sleeping_worker_is_woken_by_requeue_on_done() {
        let queue = Queue::new();
        queue.add(7);
        assert_eq!(queue.get().await, Some(7));
        queue.add(7);
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        queue.done(&7);
        assert_eq!(worker.await.ok(), Some(Some(7)));
    }

    #[tokio::test(start_paused = true)]
    async fn cancelled_get_loses_nothing() {
        let queue = Queue::new();
        assert!(still_pending(queue.get()).await);
        assert!(still_pending(queue.get()).await);
        queue.add(1);
        assert_eq!(queue.get().await, Some(1));
        // Every cancelled sleeper deregistered.
        assert_eq!(
            queue
                .shared
                .sleeping
                .load(std::sync::atomic::Ordering::SeqCst),
            0
        );
    }

    #[tokio::test(start_paused = true)]
    async fn many_sleeping_workers_each_get_one_item() {
        let queue = Queue::new();
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let queue = queue.clone();
                tokio::spawn(async move { queue.get().await })
            })
            .collect();
        tokio::task::yield_now().await;
        for item in 0..4 {
            queue.add(item);
        }
        let mut got = Vec::new();
        for worker in workers {
            got.push(worker.await.ok().flatten());
        }
        got.sort();
        assert_eq!(got, vec![Some(0), Some(1), Some(2), Some(3)]);
    }

    #[tokio::test(start_paused = true)]
    async fn add_to_a_busy_queue_is_kept_in_order_and_deduplicated() {
        let queue = Queue::new();
        queue.add("a");
        {
            let _busy = queue.shared.state.lock();
            queue.add("b");
            queue.add("a");
            queue.add("b");
            queue.add("c");
        }
        assert_eq!(queue.len(), 3);
        for expected in ["a", "b", "c"] {
            assert_eq!(queue.get().await, Some(expected));
        }
        // Added to a busy queue while processing: queued again on done.
        {
            let _busy = queue.shared.state.lock();
            queue.add("a");
        }
        queue.done(&"a");
        assert_eq!(queue.get().await, Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn add_to_a_busy_queue_wakes_a_sleeping_worker() {
        let queue = Queue::new();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        {
            let _busy = queue.shared.state.lock();
            queue.add(7);
        }
        assert_eq!(worker.await.ok(), Some(Some(7)));
    }

    #[tokio::test(start_paused = true)]
    async fn add_to_a_busy_queue_before_shut_down_is_kept_and_after_is_dropped() {
        let queue = Queue::new();
        {
            let _busy = queue.shared.state.lock();
            queue.add(1);
        }
        queue.shut_down();
        {
            let _busy = queue.shared.state.lock();
            queue.add(2);
        }
        assert_eq!(queue.get().await, Some(1));
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn after_shut_down_get_returns_what_is_queued_then_none() {
        let queue = Queue::new();
        queue.add("a");
        queue.add("b");
        queue.shut_down();
        assert!(queue.is_shutting_down());
        queue.add("c");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert_eq!(queue.get().await, None);
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn add_while_processing_after_shut_down_is_dropped() {
        let queue = Queue::new();
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        queue.shut_down();
        queue.add("a");
        queue.done(&"a");
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_wakes_sleeping_workers() {
        let queue: Queue<u32> = Queue::new();
        let worker = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        queue.shut_down();
        assert_eq!(worker.await.ok(), Some(None));
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_queued_and_in_flight_items() {
        let queue = Queue::new();
        queue.add("a");
        queue.add("b");
        assert_eq!(queue.get().await, Some("a"));
        let drain = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        assert!(queue.is_shutting_down());
        queue.add("c");
        queue.done(&"a");
        // Nothing in flight, but "b" is still queued: client-go would return here.
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        assert_eq!(queue.get().await, Some("b"));
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        queue.done(&"b");
        assert!(drain.await.is_ok());
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_item_requeued_on_done() {
        let queue = Queue::new();
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        queue.add("a");
        let drain = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        queue.done(&"a");
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert!(drain.await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn drain_of_empty_queue_returns_at_once() {
        let queue: Queue<u8> = Queue::new();
        queue.shut_down_with_drain().await;
        assert!(queue.is_shutting_down());
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_cuts_drain_short() {
        let queue = Queue::new();
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        let drain = tokio::spawn({
            let queue = queue.clone();
            async move { queue.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        queue.shut_down();
        assert!(drain.await.is_ok());
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Event {
        Add,
        Get(Duration),
        Done(Duration),
        Unfinished(Duration, Duration),
    }

    #[derive(Default)]
    struct Recorder {
        names: Mutex<Vec<String>>,
        events: Arc<Mutex<Vec<Event>>>,
    }

    struct Sink(Arc<Mutex<Vec<Event>>>);

    impl QueueMetrics for Sink {
        fn add(&self) {
            self.0.lock().push(Event::Add);
        }
        fn get(&self, queued_for: Duration) {
            self.0.lock().push(Event::Get(queued_for));
        }
        fn done(&self, worked_for: Duration) {
            self.0.lock().push(Event::Done(worked_for));
        }
        fn update_unfinished(&self, unfinished_work: Duration, longest_running: Duration) {
            self.0
                .lock()
                .push(Event::Unfinished(unfinished_work, longest_running));
        }
    }

    impl MetricsProvider for Recorder {
        fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
            self.names.lock().push(name.to_string());
            Arc::new(Sink(Arc::clone(&self.events)))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn unnamed_queue_has_no_metrics() {
        let recorder = Arc::new(Recorder::default());
        let queue = Queue::with_config(QueueConfig::new().metrics(recorder.clone()));
        queue.add(1);
        assert_eq!(queue.get().await, Some(1));
        queue.done(&1);
        assert!(recorder.names.lock().is_empty());
        assert!(recorder.events.lock().is_empty());
        assert!(queue.shared.metrics.is_none());
        assert!(!queue.shared.state.lock().store.is_timed());
    }

    #[tokio::test(start_paused = true)]
    async fn refresh_task_ends_once_shut_down_and_drained() {
        let runtime = tokio::runtime::Handle::current().metrics();
        let baseline = runtime.num_alive_tasks();
        let recorder = Arc::new(Recorder::default());
        let queue = Queue::with_config(QueueConfig::new().name("q").metrics(recorder.clone()));
        tokio::task::yield_now().await;
        assert_eq!(runtime.num_alive_tasks(), baseline + 1);
        queue.add(1);
        assert_eq!(queue.get().await, Some(1));
        queue.shut_down();
        tokio::time::sleep(Duration::from_secs(2)).await;
        // Still reporting: an item is in flight.
        assert_eq!(runtime.num_alive_tasks(), baseline + 1);
        queue.done(&1);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(runtime.num_alive_tasks(), baseline);
        assert!(recorder.events.lock().contains(&Event::Unfinished(
            Duration::from_millis(1500),
            Duration::from_millis(1500)
        )));
    }

    #[tokio::test(start_paused = true)]
    async fn named_queue_reports_adds_latencies_and_unfinished_work() {
        let recorder = Arc::new(Recorder::default());
        let queue = Queue::with_config(QueueConfig::new().name("foos").metrics(recorder.clone()));
        assert_eq!(queue.name(), Some("foos"));
        assert_eq!(*recorder.names.lock(), vec!["foos".to_string()]);

        queue.add("a");
        queue.add("a"); // deduplicated: not an add
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(queue.get().await, Some("a"));
        queue.add("a"); // dirty while processing: an add
        tokio::time::sleep(Duration::from_millis(700)).await;
        queue.done(&"a");
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");

        let events: Vec<Event> = recorder
            .events
            .lock()
            .iter()
            .copied()
            .filter(|event| !matches!(event, Event::Unfinished(..)))
            .collect();
        assert_eq!(
            events,
            vec![
                Event::Add,
                Event::Get(Duration::from_millis(30)),
                Event::Add,
                Event::Done(Duration::from_millis(700)),
                Event::Get(Duration::from_millis(705)),
                Event::Done(Duration::ZERO),
            ]
        );
        // The refresh ran while "a" was in flight for 700 ms (every 500 ms).
        let unfinished: Vec<Event> = recorder
            .events
            .lock()
            .iter()
            .copied()
            .filter(|event| matches!(event, Event::Unfinished(..)))
            .collect();
        assert!(unfinished.contains(&Event::Unfinished(
            Duration::from_millis(470),
            Duration::from_millis(470)
        )));
    }
}
