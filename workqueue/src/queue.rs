//! The basic work queue: dedup while waiting, exclusive while processing.
//!
//! [`Queue`] is the handle and its operations; the state its handles share, and the hand-off
//! between adders and workers around its lock, are in `queue_shared`.

use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::Arc;

use crate::config::QueueConfig;
use crate::metrics::QueueMetrics;
use crate::queue_shared::{Effects, MetricsHook, Shared, refresh_unfinished};
use crate::store::{Added, Done};
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
            shared: Arc::new(Shared::new(name, metrics)),
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
            shared.add_busy(item);
            return;
        };
        let mut adds = shared.move_inbox(&mut state);
        let added = state.add(item);
        if added != Added::Ignored {
            adds += 1;
        }
        shared.unlock_and_report(state, adds);
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
        shared.unlock_and_report(state, adds);
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
        shared.unlock_and_report(state, adds);
        if item.is_some() {
            shared.report_get(queued_for);
            return item;
        }
        if closed {
            return None;
        }
        shared.wait_for_item().await
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
        let drained = done != Done::Stray && state.draining && state.store.is_empty();
        shared.unlock_and_report(state, adds);
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

    /// Stops accepting adds. Workers still get what is queued, then `None`.
    ///
    /// Also ends any [`shut_down_with_drain`](Queue::shut_down_with_drain) that is waiting.
    pub fn shut_down(&self) {
        let effects = self.shared.close(false);
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
        let effects = self.shared.close(true);
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
#[path = "queue_tests.rs"]
mod tests;
