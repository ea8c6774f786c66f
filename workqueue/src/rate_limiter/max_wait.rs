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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::WithMaxWait;
    use crate::rate_limiter::{ItemExponentialFailure, RateLimiter};

    #[test]
    fn caps_the_inner_delay() {
        let ms = Duration::from_millis(1);
        let limiter = WithMaxWait::new(
            ItemExponentialFailure::new(ms, Duration::from_secs(1)),
            5 * ms,
        );
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, vec![ms, 2 * ms, 4 * ms, 5 * ms, 5 * ms]);
        assert_eq!(limiter.num_requeues(&"a"), 5);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), ms);
    }
}
