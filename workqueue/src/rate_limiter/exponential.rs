//! Per-item exponential backoff.

use std::hash::Hash;
use std::time::Duration;

use super::RateLimiter;
use super::item_failures::ItemFailures;

/// Per-item exponential backoff: after `n` earlier failures the delay is `base · 2^n`,
/// capped at `max` (an overflow also yields `max`).
///
/// With the defaults (5 ms, 1000 s): 5, 10, 20, 40 ms, …, 655.36 s, then 1000 s from the 19th
/// consecutive failure on.
pub struct ItemExponentialFailure<T> {
    base: Duration,
    max: Duration,
    failures: ItemFailures<T>,
}

impl<T: Eq + Hash + Clone> ItemExponentialFailure<T> {
    /// The default base delay (5 ms), as in client-go's controller default.
    pub const DEFAULT_BASE: Duration = Duration::from_millis(5);
    /// The default maximum delay (1000 s).
    pub const DEFAULT_MAX: Duration = Duration::from_secs(1000);

    /// Backoff from `base`, doubling per failure, capped at `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: ItemFailures::new(),
        }
    }
}

impl<T: Eq + Hash + Clone> Default for ItemExponentialFailure<T> {
    /// 5 ms doubling up to 1000 s.
    fn default() -> Self {
        Self::new(Self::DEFAULT_BASE, Self::DEFAULT_MAX)
    }
}

/// `min(base · 2^n, max)`, with overflow giving `max`.
pub(crate) fn backoff(base: Duration, max: Duration, n: usize) -> Duration {
    if base.is_zero() {
        return Duration::ZERO;
    }
    let Ok(shift) = u32::try_from(n) else {
        return max;
    };
    let Some(factor) = 1u128.checked_shl(shift) else {
        return max;
    };
    match base.as_nanos().checked_mul(factor) {
        Some(nanos) if nanos < max.as_nanos() => {
            // `nanos < max` so the seconds fit in a `u64`.
            let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
            // The remainder is below 10^9, so it fits in a `u32`.
            let sub = (nanos % 1_000_000_000) as u32;
            Duration::new(secs, sub)
        }
        _ => max,
    }
}

impl<T: Eq + Hash + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailure<T> {
    fn when(&self, item: &T) -> Duration {
        let n = self.failures.record(item);
        backoff(self.base, self.max, n)
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.count(item)
    }
}

impl<T> std::fmt::Debug for ItemExponentialFailure<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemExponentialFailure")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("items", &self.failures.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{ItemExponentialFailure, backoff};
    use crate::rate_limiter::RateLimiter;

    #[test]
    fn doubles_from_base_and_caps_at_max() {
        let limiter = ItemExponentialFailure::default();
        let mut expected = Duration::from_millis(5);
        // 5 ms · 2^n for n = 0..=17 (5 ms … 655.36 s).
        for n in 0..18 {
            assert_eq!(limiter.when(&"a"), expected, "failure {n}");
            expected *= 2;
        }
        assert_eq!(expected, Duration::from_millis(1_310_720));
        // From the 19th consecutive failure on: 1000 s.
        for _ in 0..100 {
            assert_eq!(limiter.when(&"a"), Duration::from_secs(1000));
        }
        assert_eq!(limiter.num_requeues(&"a"), 118);
    }

    #[test]
    fn items_are_independent_and_forget_resets() {
        let limiter = ItemExponentialFailure::new(Duration::from_millis(1), Duration::from_secs(1));
        assert_eq!(limiter.when(&"a"), Duration::from_millis(1));
        assert_eq!(limiter.when(&"a"), Duration::from_millis(2));
        assert_eq!(limiter.when(&"b"), Duration::from_millis(1));
        assert_eq!(limiter.num_requeues(&"a"), 2);
        assert_eq!(limiter.num_requeues(&"b"), 1);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), Duration::from_millis(1));
        assert_eq!(limiter.num_requeues(&"c"), 0);
    }

    #[test]
    fn overflow_yields_max() {
        let max = Duration::from_secs(1000);
        assert_eq!(backoff(Duration::from_nanos(1), max, 127), max);
        assert_eq!(backoff(Duration::from_nanos(1), max, 128), max);
        assert_eq!(backoff(Duration::from_nanos(1), max, usize::MAX), max);
        assert_eq!(backoff(Duration::MAX, Duration::MAX, 1), Duration::MAX);
        assert_eq!(backoff(Duration::MAX, Duration::MAX, 0), Duration::MAX);
        assert_eq!(backoff(Duration::ZERO, max, 500), Duration::ZERO);
        assert_eq!(
            backoff(Duration::from_secs(3), Duration::MAX, 2),
            Duration::from_secs(12)
        );
    }
}
