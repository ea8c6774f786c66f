//! A token bucket shared by all items.

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::RateLimiter;
use crate::error::Error;

/// A token bucket shared by all items: `burst` tokens, refilled at `qps` tokens per second.
///
/// Each [`when`](RateLimiter::when) reserves one token and returns how long until that token
/// is available, like Go's `rate.Limiter.Reserve`; reservations are never cancelled.
/// [`forget`](RateLimiter::forget) does nothing and [`num_requeues`](RateLimiter::num_requeues)
/// is always 0: the bucket has no per-item state.
///
/// # The delay is capped
///
/// In client-go the bucket's delay grows without bound: every reservation queues behind all
/// earlier ones, so after a mass requeue (say 10 000 items failing at once at 10 qps) the
/// last items wait about 16 minutes, and every item that fails afterwards waits behind them
/// too (kubernetes/kubernetes#104554). Here the delay is capped at `max_delay`, which defaults
/// to the time it takes to refill a full burst (`burst / qps`: 10 s for 10 qps and a burst of
/// 100). A reservation that would wait longer gets `max_delay` and does not deepen the debt,
/// so the bucket is back to normal at most `max_delay` after the storm ends. The price is that
/// during a storm more than `qps` retries per second can come due; the per-item exponential
/// backoff it is usually combined with (see [`MaxOf`](super::MaxOf)) still spaces out each
/// item's own retries. Set [`with_max_delay`](TokenBucket::with_max_delay) to
/// [`Duration::MAX`] for client-go's uncapped behaviour.
///
/// Time is read from [`tokio::time::Instant`], so the bucket follows paused test time.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: u32,
    max_delay: Duration,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Available tokens; negative while reservations wait for refills.
    tokens: f64,
    /// When `tokens` was last brought up to date; `None` before the first reservation (the
    /// bucket starts full).
    last: Option<Instant>,
}

impl TokenBucket {
    /// A bucket of `burst` tokens refilled at `qps` tokens per second, with the default cap
    /// on the delay (`burst / qps`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRate`] if `qps` is not a finite number above zero,
    /// [`Error::ZeroBurst`] if `burst` is zero.
    pub fn new(qps: f64, burst: u32) -> Result<Self, Error> {
        if !(qps.is_finite() && qps > 0.0) {
            return Err(Error::InvalidRate { qps });
        }
        if burst == 0 {
            return Err(Error::ZeroBurst);
        }
        let max_delay =
            Duration::try_from_secs_f64(f64::from(burst) / qps).unwrap_or(Duration::MAX);
        Ok(Self::build(qps, burst, max_delay))
    }

    /// client-go's controller default: 10 tokens per second, burst 100 (delay capped at 10 s).
    pub(crate) fn controller_default() -> Self {
        Self::build(10.0, 100, Duration::from_secs(10))
    }

    fn build(qps: f64, burst: u32, max_delay: Duration) -> Self {
        Self {
            qps,
            burst,
            max_delay,
            state: Mutex::new(Bucket {
                tokens: f64::from(burst),
                last: None,
            }),
        }
    }

    /// Caps the delay of a reservation at `max_delay` instead of `burst / qps`.
    /// [`Duration::MAX`] disables the cap (client-go's behaviour).
    pub fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// The refill rate, in tokens per second.
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// The bucket's capacity.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The longest delay a reservation returns.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// Reserves one token at `now` and returns the wait until it is available.
    fn reserve(&self, now: Instant) -> Duration {
        let mut bucket = self.state.lock();
        let burst = f64::from(self.burst);
        if let Some(last) = bucket.last {
            let elapsed = now.saturating_duration_since(last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.qps).min(burst);
        }
        if bucket.last.is_none_or(|last| now > last) {
            bucket.last = Some(now);
        }
        let tokens = bucket.tokens - 1.0;
        if tokens >= 0.0 {
            bucket.tokens = tokens;
            return Duration::ZERO;
        }
        let wait = -tokens / self.qps;
        let max_wait = self.max_delay.as_secs_f64();
        if wait >= max_wait {
            // Never owe more than `max_delay` worth of tokens: later reservations get the cap
            // instead of queueing behind it.
            bucket.tokens = tokens.max(-max_wait * self.qps);
            return self.max_delay;
        }
        bucket.tokens = tokens;
        Duration::try_from_secs_f64(wait).unwrap_or(self.max_delay)
    }
}

impl<T> RateLimiter<T> for TokenBucket {
    fn when(&self, _item: &T) -> Duration {
        self.reserve(Instant::now())
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::TokenBucket;
    use crate::error::Error;
    use crate::rate_limiter::RateLimiter;

    fn when(bucket: &TokenBucket) -> Duration {
        RateLimiter::<()>::when(bucket, &())
    }

    /// The delay rounded to whole microseconds (token maths is in floating point).
    fn micros(delay: Duration) -> u128 {
        (delay.as_nanos() + 500) / 1000
    }

    #[tokio::test(start_paused = true)]
    async fn burst_is_free_then_one_token_per_interval() -> Result<(), Error> {
        let bucket = TokenBucket::new(10.0, 100)?;
        assert_eq!(bucket.max_delay(), Duration::from_secs(10));
        for _ in 0..100 {
            assert_eq!(when(&bucket), Duration::ZERO);
        }
        // Reservations queue behind each other: 100 ms, 200 ms, 300 ms.
        assert_eq!(micros(when(&bucket)), 100_000);
        assert_eq!(micros(when(&bucket)), 200_000);
        assert_eq!(micros(when(&bucket)), 300_000);
        // 1 s later, 10 tokens came back: the debt of 3 is paid and 7 are available.
        tokio::time::advance(Duration::from_secs(1)).await;
        for _ in 0..7 {
            assert_eq!(when(&bucket), Duration::ZERO);
        }
        assert_eq!(micros(when(&bucket)), 100_000);
        assert_eq!(RateLimiter::<()>::num_requeues(&bucket, &()), 0);
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn delay_is_capped_after_a_mass_requeue() -> Result<(), Error> {
        // kubernetes#104554: 10 000 failures at 10 qps would otherwise wait up to ~16 min.
        let bucket = TokenBucket::new(10.0, 100)?;
        let mut longest = Duration::ZERO;
        for _ in 0..10_000 {
            longest = longest.max(when(&bucket));
        }
        assert_eq!(longest, Duration::from_secs(10));
        assert_eq!(when(&bucket), Duration::from_secs(10));
        // The debt did not grow past the cap: 10 s later the bucket is back to empty.
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(micros(when(&bucket)), 100_000);
        // And after refilling a full burst, free again.
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(when(&bucket), Duration::ZERO);
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn cap_is_configurable() -> Result<(), Error> {
        let bucket = TokenBucket::new(1.0, 1)?.with_max_delay(Duration::from_millis(2500));
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(micros(when(&bucket)), 1_000_000);
        assert_eq!(micros(when(&bucket)), 2_000_000);
        assert_eq!(when(&bucket), Duration::from_millis(2500));
        assert_eq!(when(&bucket), Duration::from_millis(2500));

        let uncapped = TokenBucket::new(1.0, 1)?.with_max_delay(Duration::MAX);
        for _ in 0..1000 {
            when(&uncapped);
        }
        assert_eq!(micros(when(&uncapped)), 1_000_000_000);
        Ok(())
    }

    #[test]
    fn rejects_invalid_parameters() {
        for qps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                TokenBucket::new(qps, 10),
                Err(Error::InvalidRate { .. })
            ));
        }
        assert_eq!(TokenBucket::new(1.0, 0).err(), Some(Error::ZeroBurst));
        assert!(TokenBucket::new(0.001, u32::MAX).is_ok());
    }
}
