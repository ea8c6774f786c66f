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
mod item_failures;
mod item_map;
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
/// Object-safe; implementations are shared between threads. A
/// [`RateLimitingQueue`](crate::RateLimitingQueue) calls [`when`](RateLimiter::when) while it
/// holds the lock of its waiting items (so that checking "already waiting" and recording the
/// failure are one step): an implementation must not call back into that queue.
pub trait RateLimiter<T>: Send + Sync {
    /// Records a failure of `item` and returns how long it must wait before its retry.
    fn when(&self, item: &T) -> Duration;

    /// Clears the history of `item` (call it when the item was processed successfully).
    fn forget(&self, item: &T);

    /// How many failures of `item` are recorded.
    fn num_requeues(&self, item: &T) -> usize;
}

/// A boxed or shared limiter is a limiter: each call goes to the limiter it points to.
macro_rules! forward_to_pointee {
    ($($pointer:ident),+) => {$(
        impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for $pointer<R> {
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
    )+};
}

forward_to_pointee!(Box, Arc);

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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{RateLimiter, default_controller_rate_limiter};

    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_is_max_of_exponential_and_bucket() {
        let limiter = default_controller_rate_limiter::<String>();
        // Per-item exponential dominates while the bucket has tokens.
        assert_eq!(limiter.when(&"a".to_string()), Duration::from_millis(5));
        assert_eq!(limiter.when(&"a".to_string()), Duration::from_millis(10));
        assert_eq!(limiter.num_requeues(&"a".to_string()), 2);
        // Spend the rest of the burst of 100 (2 tokens used above).
        for i in 0..98 {
            assert_eq!(limiter.when(&format!("x{i}")), Duration::from_millis(5));
        }
        // The bucket dominates: 100 ms per token at 10 qps.
        let delay = limiter.when(&"b".to_string());
        assert!(delay > Duration::from_millis(99) && delay <= Duration::from_millis(100));
        // Capped at 10 s however many items fail at once.
        for i in 0..1000 {
            limiter.when(&format!("y{i}"));
        }
        assert_eq!(limiter.when(&"c".to_string()), Duration::from_secs(10));
        limiter.forget(&"a".to_string());
        assert_eq!(limiter.num_requeues(&"a".to_string()), 0);
    }

    #[test]
    fn trait_objects_and_smart_pointers_are_limiters() {
        let shared: Arc<dyn RateLimiter<u32>> = Arc::new(default_controller_rate_limiter());
        let boxed: Box<dyn RateLimiter<u32>> = Box::new(Arc::clone(&shared));
        assert_eq!(boxed.when(&1), Duration::from_millis(5));
        assert_eq!(shared.num_requeues(&1), 1);
        boxed.forget(&1);
        assert_eq!(shared.num_requeues(&1), 0);
    }
}
