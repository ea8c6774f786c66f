//! The maximum of several limiters.

use std::time::Duration;

use super::RateLimiter;

/// Combines limiters: [`when`](RateLimiter::when) asks every one of them (so each records the
/// failure) and returns the longest delay; [`num_requeues`](RateLimiter::num_requeues) is the
/// maximum; [`forget`](RateLimiter::forget) goes to all. With no limiter, the delay is zero.
pub struct MaxOf<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOf<T> {
    /// The maximum of `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOf<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

impl<T> std::fmt::Debug for MaxOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOf")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::MaxOf;
    use crate::rate_limiter::{ItemExponentialFailure, ItemFastSlow, RateLimiter};

    #[test]
    fn takes_the_longest_delay_and_advances_every_limiter() {
        let ms = Duration::from_millis(1);
        let limiter = MaxOf::new(vec![
            Box::new(ItemExponentialFailure::new(ms, Duration::from_secs(1))),
            Box::new(ItemFastSlow::new(3 * ms, 10 * ms, 2)),
        ]);
        // exponential 1, 2, 4, 8, 16 ms; fast-slow 3, 3, 10, 10, 10 ms.
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, vec![3 * ms, 3 * ms, 10 * ms, 10 * ms, 16 * ms]);
        assert_eq!(limiter.num_requeues(&"a"), 5);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), 3 * ms);
    }

    #[test]
    fn num_requeues_is_the_maximum() {
        let fast_slow = std::sync::Arc::new(ItemFastSlow::new(Duration::ZERO, Duration::ZERO, 1));
        fast_slow.when(&"a");
        fast_slow.when(&"a");
        let limiter = MaxOf::new(vec![
            Box::new(ItemExponentialFailure::default()),
            Box::new(fast_slow),
        ]);
        limiter.when(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 3);
    }

    #[test]
    fn empty_is_zero() {
        let limiter: MaxOf<&str> = MaxOf::new(Vec::new());
        assert_eq!(limiter.when(&"a"), Duration::ZERO);
        assert_eq!(limiter.num_requeues(&"a"), 0);
    }
}
