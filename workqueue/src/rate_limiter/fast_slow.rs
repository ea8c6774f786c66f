//! Per-item fast-then-slow retries.

use std::hash::Hash;
use std::time::Duration;

use super::RateLimiter;
use super::item_failures::ItemFailures;

/// Per-item two-speed retries: the first `max_fast_attempts` attempts wait `fast`, later ones
/// wait `slow`. The attempt is counted before the choice, so attempt `max_fast_attempts` is
/// still fast and attempt `max_fast_attempts + 1` is the first slow one.
pub struct ItemFastSlow<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: usize,
    attempts: ItemFailures<T>,
}

impl<T: Eq + Hash + Clone> ItemFastSlow<T> {
    /// `fast` for the first `max_fast_attempts` attempts of an item, then `slow`.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: usize) -> Self {
        Self {
            fast,
            slow,
            max_fast_attempts,
            attempts: ItemFailures::new(),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemFastSlow<T> {
    fn when(&self, item: &T) -> Duration {
        // This attempt included.
        let attempts = self.attempts.record(item).saturating_add(1);
        if attempts <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.attempts.count(item)
    }
}

impl<T> std::fmt::Debug for ItemFastSlow<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemFastSlow")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::ItemFastSlow;
    use crate::rate_limiter::RateLimiter;

    #[test]
    fn switches_to_slow_after_max_fast_attempts() {
        let fast = Duration::from_millis(5);
        let slow = Duration::from_secs(10);
        let limiter = ItemFastSlow::new(fast, slow, 3);
        assert_eq!(limiter.when(&"a"), fast);
        assert_eq!(limiter.when(&"a"), fast);
        assert_eq!(limiter.when(&"a"), fast);
        assert_eq!(limiter.when(&"a"), slow);
        assert_eq!(limiter.when(&"a"), slow);
        assert_eq!(limiter.num_requeues(&"a"), 5);
        assert_eq!(limiter.when(&"b"), fast);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), fast);
    }

    #[test]
    fn zero_fast_attempts_is_always_slow() {
        let limiter = ItemFastSlow::new(Duration::from_millis(1), Duration::from_secs(1), 0);
        assert_eq!(limiter.when(&1), Duration::from_secs(1));
    }
}
