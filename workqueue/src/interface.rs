//! The queue traits: what a queue offers, one level per capability, after client-go's
//! `workqueue` interfaces (`TypedInterface` ⊂ `TypedDelayingInterface` ⊂
//! `TypedRateLimitingInterface`) and controller-runtime's priority queue (adds with options,
//! gets with the priority).
//!
//! | trait | adds to the level below | implemented by |
//! |---|---|---|
//! | [`WorkQueue`] | `add`, `get`, `done`, `len`, shutdown and drain | every queue |
//! | [`DelayingWorkQueue`] | `add_after` | [`DelayingQueue`], [`RateLimitingQueue`], [`PriorityQueue`] |
//! | [`RateLimitingWorkQueue`] | `add_rate_limited`, `forget`, `num_requeues` | [`RateLimitingQueue`], [`PriorityQueue`] |
//! | [`PriorityWorkQueue`] | `add_with` ([`AddOptions`]: priority, delay, retry), `get_with_priority` | [`RateLimitingQueue`] (priorities ignored), [`PriorityQueue`] |
//!
//! Code that drives a queue (a controller's workers, its event handlers) is written once
//! against a trait and monomorphised for the queue it is given: the traits are generic, not
//! object-safe (`get` and the drain return their futures as they are, unboxed, so that a
//! get/done cycle allocates nothing). Pick the queue type where the program is configured.
//!
//! [`DelayingQueue`]: crate::DelayingQueue
//! [`RateLimitingQueue`]: crate::RateLimitingQueue
//! [`PriorityQueue`]: crate::PriorityQueue

use std::future::Future;
use std::hash::Hash;
use std::time::Duration;

use crate::add_options::{AddOptions, Priority};

/// Implements the queue traits for `$queue<T>` by its inherent methods of the same names (each
/// queue documents its exact behaviour there): `work` for [`WorkQueue`], `delaying` adds
/// [`DelayingWorkQueue`], `rate_limiting` adds [`RateLimitingWorkQueue`].
macro_rules! impl_queue_traits {
    (work $queue:ident) => {
        impl<T: Eq + std::hash::Hash + Clone + Send + Sync + 'static> $crate::WorkQueue
            for $queue<T>
        {
            type Item = T;

            fn add(&self, item: T) {
                $queue::add(self, item);
            }

            fn get(&self) -> impl Future<Output = Option<T>> + Send + '_ {
                $queue::get(self)
            }

            fn done(&self, item: &T) {
                $queue::done(self, item);
            }

            fn len(&self) -> usize {
                $queue::len(self)
            }

            fn shut_down(&self) {
                $queue::shut_down(self);
            }

            fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
                $queue::shut_down_with_drain(self)
            }

            fn is_shutting_down(&self) -> bool {
                $queue::is_shutting_down(self)
            }
        }
    };
    (delaying $queue:ident) => {
        impl_queue_traits!(work $queue);

        impl<T: Eq + std::hash::Hash + Clone + Send + Sync + 'static> $crate::DelayingWorkQueue
            for $queue<T>
        {
            fn add_after(&self, item: T, delay: std::time::Duration) {
                $queue::add_after(self, item, delay);
            }
        }
    };
    (rate_limiting $queue:ident) => {
        impl_queue_traits!(delaying $queue);

        impl<T: Eq + std::hash::Hash + Clone + Send + Sync + 'static>
            $crate::RateLimitingWorkQueue for $queue<T>
        {
            fn add_rate_limited(&self, item: T) {
                $queue::add_rate_limited(self, item);
            }

            fn forget(&self, item: &T) {
                $queue::forget(self, item);
            }

            fn num_requeues(&self, item: &T) -> usize {
                $queue::num_requeues(self, item)
            }
        }
    };
}
pub(crate) use impl_queue_traits;

/// A work queue: dedup while an item waits, exclusive while a worker holds it, shutdown and
/// drain (client-go's `TypedInterface`).
///
/// Implemented by every queue of this crate; the inherent methods of each queue document its
/// exact behaviour. A queue is a cheap handle: clones share one queue.
///
/// ```
/// use workqueue::{Queue, WorkQueue};
///
/// /// Drains `queue`, returning what a worker got, in order.
/// async fn drain<Q: WorkQueue>(queue: Q) -> Vec<Q::Item> {
///     queue.shut_down();
///     let mut got = Vec::new();
///     while let Some(item) = queue.get().await {
///         queue.done(&item);
///         got.push(item);
///     }
///     got
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = Queue::new();
/// queue.add("default/a");
/// queue.add("default/b");
/// queue.add("default/a");
/// assert_eq!(drain(queue).await, ["default/a", "default/b"]);
/// # }
/// ```
pub trait WorkQueue: Clone + Send + Sync + 'static {
    /// What the queue holds: usually an object's key.
    type Item: Eq + Hash + Clone + Send + Sync + 'static;

    /// Marks `item` as needing processing; a no-op if it already waits, queued again at its
    /// `done` if a worker holds it, dropped once the queue is shutting down.
    fn add(&self, item: Self::Item);

    /// Waits for an item and hands it to the caller, who must call [`done`](WorkQueue::done)
    /// with it; `None` once the queue is shutting down and empty.
    fn get(&self) -> impl Future<Output = Option<Self::Item>> + Send + '_;

    /// Marks `item`, handed out by [`get`](WorkQueue::get), as processed.
    fn done(&self, item: &Self::Item);

    /// The number of items ready and waiting for a worker (not counting items held by
    /// workers, nor items waiting for a ready time).
    fn len(&self) -> usize;

    /// Whether no item is ready and waiting for a worker.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting adds; workers still get what is ready, then `None`.
    fn shut_down(&self);

    /// Stops accepting adds, then waits until every ready item has been handed out and every
    /// handed-out item is done.
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_;

    /// Whether a shutdown (with or without drain) was asked for.
    fn is_shutting_down(&self) -> bool;
}

/// A [`WorkQueue`] that can also add an item after a delay (client-go's
/// `TypedDelayingInterface`).
pub trait DelayingWorkQueue: WorkQueue {
    /// Adds `item` once `delay` has passed; at once if `delay` is zero.
    fn add_after(&self, item: Self::Item, delay: Duration);
}

/// A [`DelayingWorkQueue`] whose retries wait as a [`RateLimiter`](crate::RateLimiter) says
/// (client-go's `TypedRateLimitingInterface`).
///
/// ```
/// use workqueue::{RateLimitingQueue, RateLimitingWorkQueue, default_controller_rate_limiter};
///
/// /// One worker step: reconcile an item, retry it with backoff on failure.
/// async fn work_once<Q: RateLimitingWorkQueue>(queue: &Q, reconcile: impl Fn(&Q::Item) -> bool) {
///     if let Some(item) = queue.get().await {
///         if reconcile(&item) {
///             queue.forget(&item);
///         } else {
///             queue.add_rate_limited(item.clone());
///         }
///         queue.done(&item);
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = RateLimitingQueue::new(default_controller_rate_limiter());
/// queue.add("default/flaky");
/// work_once(&queue, |_| false).await;
/// assert_eq!(queue.num_requeues(&"default/flaky"), 1);
/// # }
/// ```
pub trait RateLimitingWorkQueue: DelayingWorkQueue {
    /// Records a failure of `item` and adds it back once the rate limiter's delay has passed.
    fn add_rate_limited(&self, item: Self::Item);

    /// Clears the rate limiter's history of `item` (after it was processed successfully).
    fn forget(&self, item: &Self::Item);

    /// How many failures of `item` the rate limiter has recorded.
    fn num_requeues(&self, item: &Self::Item) -> usize;
}

/// A [`RateLimitingWorkQueue`] whose adds carry a [`Priority`] and whose gets return it, after
/// controller-runtime's priority queue (`AddWithOpts`, `GetWithPriority`).
///
/// The provided methods ignore priorities, as controller-runtime does for a queue that is not
/// its priority queue: [`add_with`](PriorityWorkQueue::add_with) becomes `add`, `add_after` or
/// `add_rate_limited`, and [`get_with_priority`](PriorityWorkQueue::get_with_priority) returns
/// every item at [`Priority::NORMAL`]. So any rate-limiting queue can serve where a priority
/// queue is expected with an empty `impl`; the [`PriorityQueue`](crate::PriorityQueue)
/// overrides both.
///
/// ```
/// use workqueue::{
///     AddOptions, Priority, PriorityQueue, PriorityWorkQueue, RateLimitingQueue,
///     default_controller_rate_limiter,
/// };
///
/// /// Queues an initial list's keys at low priority, then one live change.
/// async fn first_out<Q: PriorityWorkQueue<Item = &'static str>>(queue: Q) -> Option<(&'static str, Priority)> {
///     for key in ["default/a", "default/b"] {
///         queue.add_with(key, AddOptions::new().priority(Priority::LOW));
///     }
///     queue.add_with("default/changed", AddOptions::new());
///     queue.get_with_priority().await
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let prioritized = PriorityQueue::new(default_controller_rate_limiter());
/// assert_eq!(first_out(prioritized).await, Some(("default/changed", Priority::NORMAL)));
/// // The plain queue ignores priorities: first in, first out.
/// let plain = RateLimitingQueue::new(default_controller_rate_limiter());
/// assert_eq!(first_out(plain).await, Some(("default/a", Priority::NORMAL)));
/// # }
/// ```
pub trait PriorityWorkQueue: RateLimitingWorkQueue {
    /// Adds `item` as `options` say: now, after a delay, or as a rate-limited retry, with
    /// their priority.
    ///
    /// Provided: ignores the priority, and a delay given together with a rate-limited retry
    /// (which caps the limiter's delay in a priority queue).
    fn add_with(&self, item: Self::Item, options: AddOptions) {
        if options.is_rate_limited() {
            self.add_rate_limited(item);
        } else if let Some(delay) = options.delay() {
            self.add_after(item, delay);
        } else {
            self.add(item);
        }
    }

    /// [`get`](WorkQueue::get), with the priority the item was queued with, so that a worker
    /// can add it back with the same priority.
    ///
    /// Provided: every item comes out at [`Priority::NORMAL`].
    fn get_with_priority(
        &self,
    ) -> impl Future<Output = Option<(Self::Item, Priority)>> + Send + '_ {
        let get = self.get();
        async move { get.await.map(|item| (item, Priority::NORMAL)) }
    }
}
