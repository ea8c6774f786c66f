//! The reflector's retry delays: an exponential ladder with jitter that starts over after a
//! quiet period (client-go's `ExponentialBackoffManager` with the idle reset).

use std::time::Duration;

use tokio::time::Instant;

/// Configuration of the delay between failed list-and-watch attempts.
///
/// The base delay starts at [`initial`](Backoff::initial) and is multiplied by
/// [`factor`](Backoff::factor) after every wait, up to [`max`](Backoff::max). Each actual
/// wait adds a random jitter: `wait = base + U[0, 1) · jitter · base`, so with the default
/// jitter of 1.0 (client-go's full jitter) a wait lands in `[base, 2·base)`. When more than
/// [`reset_after`](Backoff::reset_after) passed since the previous wait, the ladder starts
/// over from `initial` (an idle reset: a watch that stayed healthy that long is forgiven).
///
/// Defaults: 800 ms, factor 2, cap 30 s, jitter 1.0, reset after 2 minutes — the ladder of
/// base delays is 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, ... seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Backoff {
    initial: Duration,
    factor: f64,
    max: Duration,
    jitter: f64,
    reset_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            factor: 2.0,
            max: Duration::from_secs(30),
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

impl Backoff {
    /// The first base delay (default 800 ms).
    pub fn initial(mut self, initial: Duration) -> Self {
        self.initial = initial;
        self
    }

    /// The growth factor of the base delay (default 2.0; values below 1.0 are treated as 1.0).
    pub fn factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }

    /// The cap of the base delay (default 30 s).
    pub fn max(mut self, max: Duration) -> Self {
        self.max = max;
        self
    }

    /// The jitter factor: each wait adds up to `jitter · base` (default 1.0; 0 disables jitter,
    /// negative values are treated as 0).
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// How long without any wait resets the ladder to the initial delay (default 2 minutes).
    pub fn reset_after(mut self, reset_after: Duration) -> Self {
        self.reset_after = reset_after;
        self
    }
}

/// One wait of the backoff, as reported to [`ReflectorOptions::on_backoff`](crate::ReflectorOptions::on_backoff).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffStep {
    /// 1 for the first wait after a reset, 2 for the next, ...
    pub attempt: u32,
    /// The base delay of this step (before jitter).
    pub base: Duration,
    /// The actual wait: `base` plus jitter.
    pub wait: Duration,
}

/// The running state of a [`Backoff`]: where on the ladder the next wait is.
#[derive(Debug)]
pub(crate) struct BackoffState {
    config: Backoff,
    rng: fastrand::Rng,
    next_base: Duration,
    attempt: u32,
    last_wait: Option<Instant>,
}

impl BackoffState {
    /// A fresh ladder; `rng` supplies the jitter (seed it for reproducible waits).
    pub(crate) fn new(config: Backoff, rng: fastrand::Rng) -> Self {
        Self {
            next_base: config.initial,
            config,
            rng,
            attempt: 0,
            last_wait: None,
        }
    }

    /// The next wait at time `now`, advancing the ladder.
    pub(crate) fn next_step(&mut self, now: Instant) -> BackoffStep {
        let idle = self
            .last_wait
            .is_some_and(|last| now.saturating_duration_since(last) > self.config.reset_after);
        if idle {
            self.next_base = self.config.initial;
            self.attempt = 0;
        }
        self.last_wait = Some(now);
        let base = self.next_base.min(self.config.max);
        self.attempt = self.attempt.saturating_add(1);
        let factor = self.config.factor.max(1.0);
        self.next_base = Duration::try_from_secs_f64(base.as_secs_f64() * factor)
            .unwrap_or(self.config.max)
            .min(self.config.max);
        let jitter = self.config.jitter.max(0.0) * self.rng.f64();
        let wait = base.saturating_add(
            Duration::try_from_secs_f64(base.as_secs_f64() * jitter).unwrap_or(Duration::ZERO),
        );
        BackoffStep {
            attempt: self.attempt,
            base,
            wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn base_delays_double_up_to_the_cap() {
        let mut state = BackoffState::new(Backoff::default(), fastrand::Rng::with_seed(1));
        let now = Instant::now();
        let bases: Vec<Duration> = (0..9).map(|_| state.next_step(now).base).collect();
        let expected = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0].map(secs);
        assert_eq!(bases, expected);
    }

    #[test]
    fn waits_stay_within_the_full_jitter_bounds() {
        let mut state = BackoffState::new(Backoff::default(), fastrand::Rng::with_seed(7));
        let now = Instant::now();
        for _ in 0..50 {
            let step = state.next_step(now);
            assert!(
                step.wait >= step.base && step.wait < step.base * 2,
                "{step:?}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_waits() {
        let now = Instant::now();
        let waits = |seed| {
            let mut state = BackoffState::new(Backoff::default(), fastrand::Rng::with_seed(seed));
            (0..5)
                .map(|_| state.next_step(now).wait)
                .collect::<Vec<_>>()
        };
        assert_eq!(waits(42), waits(42));
        assert_ne!(waits(42), waits(43));
    }

    #[test]
    fn no_jitter_gives_the_bare_ladder() {
        let mut state = BackoffState::new(Backoff::default().jitter(0.0), fastrand::Rng::new());
        let now = Instant::now();
        assert_eq!(state.next_step(now).wait, secs(0.8));
        assert_eq!(state.next_step(now).wait, secs(1.6));
    }

    #[test]
    fn extreme_settings_saturate_instead_of_overflowing() {
        let config = Backoff::default()
            .initial(Duration::MAX)
            .max(Duration::MAX)
            .factor(f64::INFINITY)
            .jitter(f64::NAN);
        let mut state = BackoffState::new(config, fastrand::Rng::with_seed(3));
        let now = Instant::now();
        for _ in 0..3 {
            assert_eq!(state.next_step(now).wait, Duration::MAX);
        }
    }

    #[test]
    fn a_quiet_period_resets_the_ladder() {
        let mut state = BackoffState::new(Backoff::default().jitter(0.0), fastrand::Rng::new());
        let start = Instant::now();
        state.next_step(start);
        state.next_step(start + secs(1.0));
        let third = state.next_step(start + secs(3.0));
        assert_eq!((third.attempt, third.base), (3, secs(3.2)));
        // Exactly two minutes later is not yet "more than" the reset interval.
        let fourth = state.next_step(start + secs(123.0));
        assert_eq!((fourth.attempt, fourth.base), (4, secs(6.4)));
        let reset = state.next_step(start + secs(244.0));
        assert_eq!((reset.attempt, reset.base), (1, secs(0.8)));
    }
}
