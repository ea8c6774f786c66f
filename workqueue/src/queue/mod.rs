//! The basic work queue: dedup while waiting, exclusive while processing.
//!
//! [`Queue`] is the handle. The machinery below it is shared with the priority queue: its
//! operations (`ops`), the state its handles share and the hand-off between adders and workers
//! around its lock (`shared`, with the `inbox` and the `lock`), what the lock guards (`state`),
//! the items themselves (`store`) and the order they go out in (`order`).

pub(crate) mod inbox;
pub(crate) mod lock;
pub(crate) mod ops;
pub(crate) mod order;
pub(crate) mod shared;
pub(crate) mod sleepers;
pub(crate) mod state;
pub(crate) mod store;

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use crate::config::QueueConfig;
use crate::interface::impl_queue_traits;
use crate::metrics::QueueMetrics;
use crate::queue::shared::Shared;
use crate::queue::store::Store;

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
    shared: Arc<Shared<Store<T>, T>>,
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
        Self {
            shared: Arc::new(Shared::new(None, None)),
        }
    }

    /// A queue configured by `config`; it has metrics if `config` names it and installs a
    /// provider.
    pub fn with_config(config: QueueConfig) -> Self {
        let sink = config.queue_metrics();
        Self::with_metrics(&config, sink)
    }

    /// A queue configured by `config` reporting to `sink` (already made from `config`).
    pub(crate) fn with_metrics(config: &QueueConfig, sink: Option<Arc<dyn QueueMetrics>>) -> Self {
        Self {
            shared: Shared::open(config, sink),
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
        self.shared.add(item);
    }

    /// Adds every item under one lock (used by the delaying queue's timer).
    pub(crate) fn add_all(&self, items: impl Iterator<Item = T>) {
        self.shared.add_all(items);
    }

    /// Waits for an item and hands it to the caller, who must call [`done`](Queue::done)
    /// with it once processed.
    ///
    /// Returns `None` once the queue is shutting down and empty. After a shutdown, items still
    /// queued are returned first. Cancel-safe: dropping the future loses no item.
    ///
    /// Takes part in tokio's cooperative scheduling: a worker that keeps finding items ready
    /// yields to the other tasks of its thread now and then, as with tokio's own channels.
    // Not an `async fn`: the shared operation's future is handed out as is, without a second
    // state machine around it (which cost about 5 % of a `wq_a` cycle).
    pub fn get(&self) -> impl Future<Output = Option<T>> + Send + '_ {
        self.shared.get()
    }

    /// Marks `item` as processed by the worker that got it.
    ///
    /// If the item was added again meanwhile, it is queued now. A `done` for an item that is
    /// not being processed is ignored.
    pub fn done(&self, item: &T) {
        self.shared.done(item);
    }

    /// The number of items waiting for a worker (not counting items being processed).
    pub fn len(&self) -> usize {
        self.shared.len()
    }

    /// Whether no item is waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether [`shut_down`](Queue::shut_down) or
    /// [`shut_down_with_drain`](Queue::shut_down_with_drain) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.is_shutting_down()
    }

    /// Stops accepting adds. Workers still get what is queued, then `None`.
    ///
    /// Also ends any [`shut_down_with_drain`](Queue::shut_down_with_drain) that is waiting.
    pub fn shut_down(&self) {
        self.shared.shut_down();
    }

    /// Stops accepting adds, then waits until every queued item has been handed out and every
    /// handed-out item is [`done`](Queue::done).
    ///
    /// Workers must keep calling `get` and `done` for this to return. A
    /// [`shut_down`](Queue::shut_down) from elsewhere cuts the wait short.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down_with_drain().await;
    }
}

impl_queue_traits!(work Queue);

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
mod tests;
