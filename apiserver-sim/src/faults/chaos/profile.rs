//! Named chaos profiles and the fault rates each one stands for.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How hard chaos mode hits: a named set of [`ChaosRates`].
///
/// Parsed from `gentle`, `standard` (alias `default`) or `harsh`, case-insensitively;
/// any other name is a [`UnknownChaosProfile`] error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChaosProfile {
    /// Rare faults: a client that handles errors at all should never notice them.
    Gentle,
    /// Frequent faults of every kind, still leaving most requests untouched (the default).
    #[default]
    Standard,
    /// Faults at every turn: several watch drops and a restart every few seconds.
    Harsh,
}

/// The name given to [`ChaosProfile::from_str`] is not a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown chaos profile {name:?}: expected one of gentle, standard (or default), harsh")]
pub struct UnknownChaosProfile {
    /// The name that was given.
    pub name: String,
}

impl FromStr for ChaosProfile {
    type Err = UnknownChaosProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "gentle" => Ok(Self::Gentle),
            "standard" | "default" => Ok(Self::Standard),
            "harsh" => Ok(Self::Harsh),
            _ => Err(UnknownChaosProfile { name: s.into() }),
        }
    }
}

impl fmt::Display for ChaosProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Gentle => "gentle",
            Self::Standard => "standard",
            Self::Harsh => "harsh",
        })
    }
}

/// What a profile injects: fractions of API requests hit by each per-request fault, and the
/// mean interval of each timed fault (each gap is drawn uniformly from half to one and a
/// half times the mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosRates {
    /// Fraction of API requests answered 500 (InternalError) or 503 (ServiceUnavailable).
    pub server_error: f64,
    /// Fraction of API requests answered 429 with `Retry-After: 1`.
    pub throttle: f64,
    /// Fraction of API requests delayed before they are handled.
    pub latency: f64,
    /// Longest added delay (each delay is uniform in `[1 ms, max_latency]`).
    pub max_latency: Duration,
    /// Fraction of API responses written as a trickle of few-byte writes.
    pub tiny_writes: f64,
    /// Fraction of bookmark-enabled watches whose bookmarks each come late.
    pub slow_bookmarks: f64,
    /// Longest hold-up of a slow bookmark (each uniform in `[1 ms, max_bookmark_delay]`).
    pub max_bookmark_delay: Duration,
    /// Mean interval between "send a bookmark now" to every watch (not a fault: it makes
    /// bookmarks, and so slow bookmarks, happen on a short run).
    pub bookmark_every: Duration,
    /// Mean interval between drops of every open watch.
    pub watch_drop_every: Duration,
    /// Mean interval between compactions of the whole history.
    pub compaction_every: Duration,
    /// Mean interval between restarts (every connection dropped, state kept).
    pub restart_every: Duration,
    /// How long after a restart new connections are dropped as soon as accepted.
    pub restart_downtime: Duration,
    /// Fraction of admission webhook calls that fail as if the webhook answered 500.
    pub webhook_error: f64,
    /// Fraction of admission webhook calls whose connection is dropped mid-request (the
    /// webhook sees a request cut short; the call fails with `EOF`).
    pub webhook_drop: f64,
    /// Fraction of admission webhook calls delayed before they are made (within the
    /// webhook's timeout, which a long delay overruns).
    pub webhook_slow: f64,
    /// Longest delay of a slow webhook call (each uniform in `[1 ms, max_webhook_delay]`).
    pub max_webhook_delay: Duration,
}

impl ChaosProfile {
    /// The rates this profile injects.
    pub fn rates(self) -> ChaosRates {
        let ms = Duration::from_millis;
        match self {
            Self::Gentle => ChaosRates {
                server_error: 0.02,
                throttle: 0.01,
                latency: 0.10,
                max_latency: ms(20),
                tiny_writes: 0.05,
                slow_bookmarks: 0.10,
                max_bookmark_delay: ms(500),
                bookmark_every: ms(2_000),
                watch_drop_every: ms(5_000),
                compaction_every: ms(10_000),
                restart_every: ms(30_000),
                restart_downtime: ms(200),
                webhook_error: 0.02,
                webhook_drop: 0.01,
                webhook_slow: 0.10,
                max_webhook_delay: ms(200),
            },
            Self::Standard => ChaosRates {
                server_error: 0.05,
                throttle: 0.03,
                latency: 0.20,
                max_latency: ms(50),
                tiny_writes: 0.10,
                slow_bookmarks: 0.20,
                max_bookmark_delay: ms(1_000),
                bookmark_every: ms(1_000),
                watch_drop_every: ms(2_000),
                compaction_every: ms(5_000),
                restart_every: ms(8_000),
                restart_downtime: ms(300),
                webhook_error: 0.05,
                webhook_drop: 0.03,
                webhook_slow: 0.20,
                max_webhook_delay: ms(1_000),
            },
            Self::Harsh => ChaosRates {
                server_error: 0.10,
                throttle: 0.05,
                latency: 0.30,
                max_latency: ms(100),
                tiny_writes: 0.25,
                slow_bookmarks: 0.30,
                max_bookmark_delay: ms(2_000),
                bookmark_every: ms(500),
                watch_drop_every: ms(1_000),
                compaction_every: ms(2_000),
                restart_every: ms(4_000),
                restart_downtime: ms(500),
                webhook_error: 0.10,
                webhook_drop: 0.05,
                webhook_slow: 0.30,
                max_webhook_delay: ms(2_000),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_display_round_trip() {
        for p in [
            ChaosProfile::Gentle,
            ChaosProfile::Standard,
            ChaosProfile::Harsh,
        ] {
            assert_eq!(p.to_string().parse::<ChaosProfile>(), Ok(p));
        }
        assert_eq!("Default".parse(), Ok(ChaosProfile::Standard));
        assert_eq!(
            "wild".parse::<ChaosProfile>(),
            Err(UnknownChaosProfile {
                name: "wild".into()
            })
        );
    }

    #[test]
    fn harsher_profiles_fail_more() {
        let [g, s, h] = [
            ChaosProfile::Gentle,
            ChaosProfile::Standard,
            ChaosProfile::Harsh,
        ]
        .map(ChaosProfile::rates);
        assert!(g.server_error < s.server_error && s.server_error < h.server_error);
        assert!(g.restart_every > s.restart_every && s.restart_every > h.restart_every);
    }
}
