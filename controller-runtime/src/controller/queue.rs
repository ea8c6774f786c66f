//! [`ControllerQueue`]: a controller's workqueue, the priority queue by default or the plain
//! rate-limiting queue when the builder opts out, behind one interface for the event handlers,
//! the external sources, the [`ControllerHandle`](crate::controller::ControllerHandle) and the workers.
//!
//! With the plain queue every priority is ignored and every key comes out at
//! [`Priority::NORMAL`], as controller-runtime's wrapper of a plain queue does.

use std::time::Duration;

use indexer::ObjectKey;
use workqueue::{AddOptions, Priority, PriorityQueue, QueueConfig, RateLimiter, RateLimitingQueue};

/// A controller's workqueue; cheap to clone (a handle).
#[derive(Clone, Debug)]
pub(crate) enum ControllerQueue {
    /// The default: highest priority first.
    Priority(PriorityQueue<ObjectKey>),
    /// Opted out: first in, first out.
    Plain(RateLimitingQueue<ObjectKey>),
}

impl ControllerQueue {
    /// A queue configured by `config` whose retries wait as `limiter` says: the priority queue
    /// if `prioritized`, else the plain rate-limiting queue.
    pub(crate) fn new(
        limiter: Box<dyn RateLimiter<ObjectKey>>,
        config: QueueConfig,
        prioritized: bool,
    ) -> Self {
        if prioritized {
            Self::Priority(PriorityQueue::with_config(limiter, config))
        } else {
            Self::Plain(RateLimitingQueue::with_config(limiter, config))
        }
    }

    /// Adds `key` now with `priority`.
    pub(crate) fn add(&self, key: ObjectKey, priority: Priority) {
        match self {
            Self::Priority(queue) => queue.add_with(key, AddOptions::new().priority(priority)),
            Self::Plain(queue) => queue.add(key),
        }
    }

    /// Adds `key` with `priority` once `delay` has passed.
    pub(crate) fn add_after(&self, key: ObjectKey, delay: Duration, priority: Priority) {
        match self {
            Self::Priority(queue) => {
                queue.add_with(key, AddOptions::new().priority(priority).after(delay));
            }
            Self::Plain(queue) => queue.add_after(key, delay),
        }
    }

    /// Records a failure of `key` and adds it with `priority` after its backoff.
    pub(crate) fn add_rate_limited(&self, key: ObjectKey, priority: Priority) {
        match self {
            Self::Priority(queue) => {
                queue.add_with(key, AddOptions::new().priority(priority).rate_limited());
            }
            Self::Plain(queue) => queue.add_rate_limited(key),
        }
    }

    /// Waits for the next key and the priority it was queued with; `None` once shut down.
    pub(crate) async fn get(&self) -> Option<(ObjectKey, Priority)> {
        match self {
            Self::Priority(queue) => queue.get_with_priority().await,
            Self::Plain(queue) => queue.get().await.map(|key| (key, Priority::NORMAL)),
        }
    }

    /// Marks `key` as reconciled.
    pub(crate) fn done(&self, key: &ObjectKey) {
        match self {
            Self::Priority(queue) => queue.done(key),
            Self::Plain(queue) => queue.done(key),
        }
    }

    /// Clears the backoff history of `key`.
    pub(crate) fn forget(&self, key: &ObjectKey) {
        match self {
            Self::Priority(queue) => queue.forget(key),
            Self::Plain(queue) => queue.forget(key),
        }
    }

    /// How many failures of `key` the rate limiter has recorded.
    pub(crate) fn num_requeues(&self, key: &ObjectKey) -> usize {
        match self {
            Self::Priority(queue) => queue.num_requeues(key),
            Self::Plain(queue) => queue.num_requeues(key),
        }
    }

    /// Stops intake; workers get what is ready, then `None`.
    pub(crate) fn shut_down(&self) {
        match self {
            Self::Priority(queue) => queue.shut_down(),
            Self::Plain(queue) => queue.shut_down(),
        }
    }
}
