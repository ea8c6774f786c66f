//! Rate limiters: how long an item waits before its next retry.
//!
//! A [`RateLimiter`] is asked [`when`](RateLimiter::when) an item that just failed may be
//! retried; asking *records a failure*. [`forget`](RateLimiter::forget) clears an item's
//! history once it succeeds. Limiters compose: [`MaxOf`] takes the longest delay of several,
//! [`WithMaxWait`] caps another limiter.
//!
//! | limiter | delay |
//! |---|---|
//! | [`ItemExponentialFailure`] | `base · 2^failures`, capped at `max` (per item) |
//! | [`TokenBucket`] | the wait for a token of a shared bucket, capped at `max_delay` |
//! | [`ItemFastSlow`] | `fast` for the first attempts, then `slow` (per item) |
//! | [`MaxOf`] | the maximum of its limiters |
//! | [`WithMaxWait`] | its inner limiter's delay, capped |
//!
//! [`default_controller_rate_limiter`] is client-go's `DefaultControllerRateLimiter`.
//!
//! Share one limiter between two queues only on purpose: one queue's `forget` resets the
//! other's backoff for the same item.

mod bucket;
mod exponential;
mod fast_slow;
mod max_of;
mod max_wait;

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

pub use bucket::TokenBucket;
pub use exponential::ItemExponentialFailure;
pub use fast_slow::ItemFastSlow;
pub use max_of::MaxOf;
pub use max_wait::WithMaxWait;

/// Decides how long an item waits before it is retried.
///
/// Object-safe; implementations are shared between threads.
pub trait RateLimiter<T>: Send + Sync {
    /// Records a failure of `item` and returns how long it must wait before its retry.
    fn when(&self, item: &T) -> Duration;

    /// Clears the history of `item` (call it when the item was processed successfully).
    fn forget(&self, item: &T);

    /// How many failures of `item` are recorded.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }

    fn forget(&self, item: &T) {
        (**self).forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }

    fn forget(&self, item: &T) {
        (**self).forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the maximum of a per-item exponential backoff
/// from 5 ms to 1000 s and a token bucket of 10 retries per second with a burst of 100.
///
/// Unlike client-go's, the bucket's delay is capped (at 10 s, the time it takes to refill a
/// full burst), so a mass requeue cannot push every item minutes into the future; see
/// [`TokenBucket`].
pub fn default_controller_rate_limiter<T>() -> MaxOf<T>
where
    T: Eq + Hash + Clone + Send + Sync + 'static,
{
    MaxOf::new(vec![
        Box::new(ItemExponentialFailure::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(TokenBucket::controller_default()),
    ])
}
