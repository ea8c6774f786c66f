//! The rate-limiting queue: a [`DelayingQueue`] whose retries wait as a [`RateLimiter`] says.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use crate::config::QueueConfig;
use crate::delaying::DelayingQueue;
use crate::interface::{PriorityWorkQueue, impl_queue_traits};
use crate::rate_limiter::RateLimiter;

/// The queue a controller's workers drain: a [`DelayingQueue`] plus
/// [`add_rate_limited`](RateLimitingQueue::add_rate_limited) for retries after a failure.
///
/// An item is never handed to two workers at once. A cheap handle (an `Arc` inside): clone
/// it to share one queue among workers and event handlers. See the
/// [crate documentation](crate) for the worker loop.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// An unnamed queue without metrics whose retries wait as `limiter` says; see
    /// [`default_controller_rate_limiter`](crate::default_controller_rate_limiter) for the
    /// usual choice, and [Runtime](DelayingQueue#runtime) for where its timer runs.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A queue configured by `config` whose retries wait as `limiter` says.
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        Self {
            queue: DelayingQueue::with_config(config),
            limiter: Arc::new(limiter),
        }
    }

    /// The queue's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.queue.name()
    }

    /// Adds `item` now; see [`Queue::add`](crate::Queue::add).
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// Adds `item` after `delay`; see [`DelayingQueue::add_after`].
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.add_after(item, delay);
    }

    /// Records a failure of `item` and adds it back once the limiter's delay has passed.
    ///
    /// **Spurious re-adds do not inflate the backoff** (kubernetes/kubernetes#132805): if the
    /// item is already waiting for a delayed add (from an earlier `add_rate_limited` or
    /// `add_after`), this call does nothing: the limiter is not asked, so no failure is
    /// counted, and the item keeps its current ready time. Only a failure observed after the
    /// item was delivered again counts. Ignored once the queue is shutting down (no failure
    /// is counted then either).
    pub fn add_rate_limited(&self, item: T) {
        let limiter = &self.limiter;
        self.queue
            .add_after_unless_waiting(item, |item| limiter.when(item));
    }

    /// Clears the limiter's history of `item`; call it when the item was processed
    /// successfully (the worker still calls [`done`](RateLimitingQueue::done)). Not calling
    /// it keeps per-item state forever and makes the item's next failure start at a long delay.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many failures of `item` the limiter has recorded.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// Whether `item` is waiting for a delayed add.
    pub fn is_waiting(&self, item: &T) -> bool {
        self.queue.is_waiting(item)
    }

    /// The number of items waiting for a delayed add.
    pub fn num_waiting(&self) -> usize {
        self.queue.num_waiting()
    }

    /// Waits for an item; see [`Queue::get`](crate::Queue::get).
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// Marks `item` as processed; see [`Queue::done`](crate::Queue::done).
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// The number of items ready and waiting for a worker.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no item is ready and waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.queue.is_shutting_down()
    }

    /// Discards delayed items and shuts down; see [`Queue::shut_down`](crate::Queue::shut_down).
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// Discards delayed items, shuts down and waits for the workers to finish everything
    /// queued and in flight; see [`Queue::shut_down_with_drain`](crate::Queue::shut_down_with_drain).
    pub async fn shut_down_with_drain(&self) {
        self.queue.shut_down_with_drain().await;
    }
}

impl_queue_traits!(rate_limiting RateLimitingQueue);

/// Priorities are ignored: every add is a plain one, every item comes out at
/// [`Priority::NORMAL`](crate::Priority::NORMAL), as controller-runtime does for a queue that
/// is not its priority queue.
impl<T: Eq + Hash + Clone + Send + Sync + 'static> PriorityWorkQueue for RateLimitingQueue<T> {}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
