//! A cap on another limiter's delay.

use std::time::Duration;

use super::RateLimiter;

/// Caps the delay of an inner limiter at `max_wait`; `forget` and `num_requeues` go to the
/// inner limiter.
#[derive(Debug)]
pub struct WithMaxWait<R> {
    inner: R,
    max_wait: Duration,
}

impl<R> WithMaxWait<R> {
    /// `inner`'s delays, never longer than `max_wait`.
    pub fn new(inner: R, max_wait: Duration) -> Self {
        Self { inner, max_wait }
    }
}

impl<T, R: RateLimiter<T>> RateLimiter<T> for WithMaxWait<R> {
    fn when(&self, item: &T) -> Duration {
        self.inner.when(item).min(self.max_wait)
    }

    fn forget(&self, item: &T) {
        self.inner.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.inner.num_requeues(item)
    }
}
