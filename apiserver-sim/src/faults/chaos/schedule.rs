//! The seeded timeline of timed chaos events: watch drops, compactions, restarts and
//! bookmark requests, each kind on its own seeded clock.

use std::time::Duration;

use super::config::ChaosConfig;

/// Something the chaos task does to the whole server at a scheduled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaosEvent {
    /// End every open watch cleanly (clients re-watch from their last resourceVersion).
    DropWatches,
    /// Compact every resource's history up to the current resourceVersion (older watch
    /// and list resourceVersions then get 410 Expired).
    Compact,
    /// A restart that keeps the data: every open connection is cut mid-flight and, for
    /// `downtime`, new connections are closed as soon as they are accepted.
    Restart {
        /// How long new connections are refused.
        downtime: Duration,
    },
    /// Every bookmark-enabled watch sends a BOOKMARK now (not a fault by itself: it makes
    /// bookmarks, and so slow bookmarks, happen within a short run).
    SendBookmarks,
}

/// One entry of a [`ChaosSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    /// Time since chaos started.
    pub at: Duration,
    /// What happens then.
    pub event: ChaosEvent,
}

/// One kind of event with its own seeded clock.
#[derive(Debug)]
struct Clock {
    next: Duration,
    mean: Duration,
    rng: fastrand::Rng,
    event: ChaosEvent,
}

impl Clock {
    fn new(seed: u64, stream: u64, mean: Duration, event: ChaosEvent) -> Self {
        // Each kind draws from its own stream, so adding a kind never shifts the others.
        let mut rng = fastrand::Rng::with_seed(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let next = gap(&mut rng, mean);
        Self {
            next,
            mean,
            rng,
            event,
        }
    }

    fn advance(&mut self) {
        self.next = self.next.saturating_add(gap(&mut self.rng, self.mean));
    }
}

/// A gap drawn uniformly from half to one and a half times `mean`.
fn gap(rng: &mut fastrand::Rng, mean: Duration) -> Duration {
    mean.mul_f64(0.5 + rng.f64()).max(Duration::from_millis(1))
}

/// The endless, deterministic timeline of [`ChaosEvent`]s for a [`ChaosConfig`]: the same
/// seed and profile always give the same events at the same offsets.
#[derive(Debug)]
pub struct ChaosSchedule {
    clocks: Vec<Clock>,
}

impl ChaosConfig {
    /// The timeline of timed events for this seed and profile.
    pub fn schedule(&self) -> ChaosSchedule {
        ChaosSchedule::new(self)
    }
}

impl ChaosSchedule {
    /// The schedule of `config`.
    pub fn new(config: &ChaosConfig) -> Self {
        let r = config.profile.rates();
        let seed = config.seed;
        Self {
            clocks: vec![
                Clock::new(seed, 1, r.watch_drop_every, ChaosEvent::DropWatches),
                Clock::new(seed, 2, r.compaction_every, ChaosEvent::Compact),
                Clock::new(
                    seed,
                    3,
                    r.restart_every,
                    ChaosEvent::Restart {
                        downtime: r.restart_downtime,
                    },
                ),
                Clock::new(seed, 4, r.bookmark_every, ChaosEvent::SendBookmarks),
            ],
        }
    }
}

impl Iterator for ChaosSchedule {
    type Item = Scheduled;

    fn next(&mut self) -> Option<Scheduled> {
        let clock = self.clocks.iter_mut().min_by_key(|c| c.next)?;
        let out = Scheduled {
            at: clock.next,
            event: clock.event,
        };
        clock.advance();
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::chaos::profile::ChaosProfile;

    fn first(seed: u64, profile: ChaosProfile, n: usize) -> Vec<Scheduled> {
        ChaosSchedule::new(&ChaosConfig { seed, profile })
            .take(n)
            .collect()
    }

    #[test]
    fn schedule_is_ordered_and_mixes_every_kind() {
        let s = first(3, ChaosProfile::Harsh, 200);
        assert!(s.windows(2).all(|w| w[0].at <= w[1].at));
        for kind in [
            ChaosEvent::DropWatches,
            ChaosEvent::Compact,
            ChaosEvent::SendBookmarks,
        ] {
            assert!(s.iter().any(|e| e.event == kind), "{kind:?}");
        }
        assert!(
            s.iter()
                .any(|e| matches!(e.event, ChaosEvent::Restart { .. }))
        );
    }

    #[test]
    fn gaps_stay_within_half_to_one_and_a_half_means() {
        let mean = ChaosProfile::Standard.rates().watch_drop_every;
        let drops: Vec<Duration> = first(9, ChaosProfile::Standard, 400)
            .into_iter()
            .filter(|e| e.event == ChaosEvent::DropWatches)
            .map(|e| e.at)
            .collect();
        assert!(drops.len() > 10);
        for w in drops.windows(2) {
            let g = w[1] - w[0];
            assert!(g >= mean / 2 && g <= mean * 3 / 2, "{g:?}");
        }
    }
}
