//! [`Chaos`]: chaos mode's live state (per-request draws, slow bookmarks, counters, on/off),
//! shared by the HTTP front end, watches and the timeline task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use super::config::ChaosConfig;
use super::profile::ChaosRates;
use super::stats::{ChaosStats, Counters, FaultKind};
use crate::machinery::status::ApiError;

/// What chaos does to one API request.
#[derive(Debug, Default)]
pub(crate) struct RequestFaults {
    /// Answer with this error instead of handling the request.
    pub fail: Option<ApiError>,
    /// Wait this long first.
    pub delay: Option<Duration>,
    /// Write the response a few bytes at a time, piece sizes drawn from this seed.
    pub tiny_writes: Option<u64>,
}

/// What chaos does to one admission webhook call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WebhookFault {
    /// Fail the call as if the webhook answered 500, without calling it.
    Error,
    /// Send the request head, then drop the connection before the answer.
    Drop,
    /// Wait this long before calling (inside the call's timeout).
    Slow(Duration),
}

/// Chaos mode's live state, shared by the HTTP front end, watches and the timeline task.
#[derive(Debug)]
pub(crate) struct Chaos {
    config: ChaosConfig,
    rates: ChaosRates,
    active: AtomicBool,
    rng: Mutex<fastrand::Rng>,
    counters: Counters,
}

impl Chaos {
    pub fn new(config: ChaosConfig) -> Self {
        Self {
            config,
            rates: config.profile.rates(),
            active: AtomicBool::new(true),
            // A stream apart from the timeline's clocks.
            rng: Mutex::new(fastrand::Rng::with_seed(config.seed ^ 0xC4A0_5EED)),
            counters: Counters::default(),
        }
    }

    pub fn config(&self) -> ChaosConfig {
        self.config
    }

    /// Whether chaos still injects faults (false after [`Chaos::stop`]).
    pub fn active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Stops injecting: no new per-request faults, and the timeline task ends.
    pub fn stop(&self) {
        self.active.store(false, Ordering::SeqCst);
    }

    pub fn record(&self, kind: FaultKind) {
        self.counters.record(kind);
    }

    pub fn stats(&self) -> ChaosStats {
        self.counters.snapshot()
    }

    /// Draws the faults of one API request and counts them.
    pub fn on_request(&self) -> RequestFaults {
        if !self.active() {
            return RequestFaults::default();
        }
        let r = &self.rates;
        let mut rng = self.rng.lock();
        let roll = rng.f64();
        let fail = if roll < r.server_error {
            self.record(FaultKind::ServerError);
            let code = if rng.bool() { 500 } else { 503 };
            Some(ApiError::injected(code, None))
        } else if roll < r.server_error + r.throttle {
            self.record(FaultKind::Throttle);
            Some(ApiError::injected(429, Some(1)))
        } else {
            None
        };
        let delay = (rng.f64() < r.latency).then(|| {
            self.record(FaultKind::Latency);
            uniform_delay(&mut rng, r.max_latency)
        });
        let tiny_writes = (rng.f64() < r.tiny_writes).then(|| {
            self.record(FaultKind::TinyWrites);
            rng.u64(..)
        });
        RequestFaults {
            fail,
            delay,
            tiny_writes,
        }
    }

    /// Draws the fault of one admission webhook call (if any) and counts it.
    pub fn on_webhook_call(&self) -> Option<WebhookFault> {
        if !self.active() {
            return None;
        }
        let r = &self.rates;
        let mut rng = self.rng.lock();
        let roll = rng.f64();
        let (kind, fault) = if roll < r.webhook_error {
            (FaultKind::WebhookError, WebhookFault::Error)
        } else if roll < r.webhook_error + r.webhook_drop {
            (FaultKind::WebhookDrop, WebhookFault::Drop)
        } else if roll < r.webhook_error + r.webhook_drop + r.webhook_slow {
            let delay = uniform_delay(&mut rng, r.max_webhook_delay);
            (FaultKind::WebhookSlow, WebhookFault::Slow(delay))
        } else {
            return None;
        };
        self.record(kind);
        Some(fault)
    }

    /// Whether a new bookmark-enabled watch sends its bookmarks late.
    pub fn slow_bookmarks(&self) -> bool {
        self.active() && self.rng.lock().f64() < self.rates.slow_bookmarks
    }

    /// How long to hold back one bookmark of a slow-bookmark watch (None once chaos has
    /// stopped); counted as injected.
    pub fn bookmark_delay(&self) -> Option<Duration> {
        if !self.active() {
            return None;
        }
        self.record(FaultKind::SlowBookmark);
        Some(uniform_delay(
            &mut self.rng.lock(),
            self.rates.max_bookmark_delay,
        ))
    }
}

/// A delay uniform in `[1 ms, max]`.
fn uniform_delay(rng: &mut fastrand::Rng, max: Duration) -> Duration {
    let max_ms = u64::try_from(max.as_millis()).unwrap_or(u64::MAX).max(1);
    Duration::from_millis(rng.u64(1..=max_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::chaos::profile::ChaosProfile;

    fn draws(seed: u64, n: usize) -> Vec<(Option<u16>, Option<Duration>, Option<u64>)> {
        let c = Chaos::new(ChaosConfig {
            seed,
            profile: ChaosProfile::Harsh,
        });
        (0..n)
            .map(|_| {
                let f = c.on_request();
                (f.fail.map(|e| e.code), f.delay, f.tiny_writes)
            })
            .collect()
    }

    #[test]
    fn request_draws_are_deterministic_counted_and_near_their_rates() {
        let a = draws(5, 2_000);
        assert_eq!(a, draws(5, 2_000));
        assert_ne!(a, draws(6, 2_000));
        let r = ChaosProfile::Harsh.rates();
        let errors = a.iter().filter(|d| matches!(d.0, Some(500 | 503))).count();
        let expected = r.server_error * 2_000.0;
        assert!(
            (errors as f64) > expected * 0.6 && (errors as f64) < expected * 1.4,
            "{errors}"
        );
        assert!(a.iter().all(|d| {
            d.1.is_none_or(|l| l >= Duration::from_millis(1) && l <= r.max_latency)
        }));
        let c = Chaos::new(ChaosConfig {
            seed: 5,
            profile: ChaosProfile::Harsh,
        });
        for _ in 0..2_000 {
            c.on_request();
        }
        let s = c.stats();
        let throttles = a.iter().filter(|d| d.0 == Some(429)).count() as u64;
        assert_eq!(
            (s.get(FaultKind::ServerError), s.get(FaultKind::Throttle)),
            (errors as u64, throttles)
        );
    }

    #[test]
    fn stopped_chaos_injects_nothing() {
        let c = Chaos::new(ChaosConfig {
            seed: 1,
            profile: ChaosProfile::Harsh,
        });
        c.stop();
        for _ in 0..100 {
            let f = c.on_request();
            assert!(f.fail.is_none() && f.delay.is_none() && f.tiny_writes.is_none());
        }
        assert!(c.bookmark_delay().is_none() && !c.slow_bookmarks());
        assert_eq!(c.stats().total(), 0);
    }
}
