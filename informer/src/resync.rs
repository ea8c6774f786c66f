//! Per-handler resync periods, with client-go's rules.

use std::time::Duration;

/// The shortest resync period a handler may ask for; shorter requests are raised to it.
pub const MIN_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// How often the informer checks for due resyncs, and how each handler's period follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResyncRules {
    /// The informer's check period: the reflector's resync timer (0 = never).
    pub(crate) check_period: Duration,
}

/// What adding a handler does to the check period and to the handler's request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Admitted {
    /// The request after the minimum and, on a running informer, the check period are applied.
    pub(crate) requested: Duration,
    /// Whether the check period was lowered to `requested` (so every listener's effective
    /// period must be recomputed).
    pub(crate) lowered_check_period: bool,
}

impl ResyncRules {
    /// Admits a handler asking for resyncs every `requested` (0 = never): below the minimum it is
    /// raised to [`MIN_RESYNC_PERIOD`]; below the check period it lowers the check period when the
    /// informer has not started, else it is raised to the check period.
    pub(crate) fn admit(&mut self, requested: Duration, started: bool) -> Admitted {
        let mut requested = requested;
        let mut lowered_check_period = false;
        if requested > Duration::ZERO {
            if requested < MIN_RESYNC_PERIOD {
                tracing::warn!(?requested, minimum = ?MIN_RESYNC_PERIOD, "resync period too short; using the minimum");
                requested = MIN_RESYNC_PERIOD;
            }
            if requested < self.check_period {
                if started {
                    tracing::warn!(
                        ?requested,
                        check_period = ?self.check_period,
                        "the informer is running and checks for resyncs less often than requested; using its check period"
                    );
                    requested = self.check_period;
                } else {
                    self.check_period = requested;
                    lowered_check_period = true;
                }
            }
        }
        Admitted {
            requested,
            lowered_check_period,
        }
    }

    /// The period at which a handler that requested `requested` actually resyncs (0 = never).
    pub(crate) fn effective(&self, requested: Duration) -> Duration {
        if requested.is_zero() {
            return Duration::ZERO;
        }
        if self.check_period.is_zero() {
            tracing::warn!(
                ?requested,
                "the informer was built without a resync period, so it never resyncs; this handler's resync request is ignored"
            );
            return Duration::ZERO;
        }
        requested.max(self.check_period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn short_requests_are_raised_to_the_minimum() {
        let mut rules = ResyncRules {
            check_period: 10 * S,
        };
        let admitted = rules.admit(Duration::from_millis(200), true);
        assert_eq!(
            admitted.requested,
            10 * S,
            "then to the running check period"
        );
        let mut rules = ResyncRules {
            check_period: 10 * S,
        };
        let admitted = rules.admit(Duration::from_millis(200), false);
        assert_eq!(admitted.requested, S);
        assert!(admitted.lowered_check_period);
        assert_eq!(rules.check_period, S);
    }

    #[test]
    fn before_start_a_shorter_request_lowers_the_check_period() {
        let mut rules = ResyncRules {
            check_period: 30 * S,
        };
        let admitted = rules.admit(5 * S, false);
        assert_eq!(
            admitted,
            Admitted {
                requested: 5 * S,
                lowered_check_period: true
            }
        );
        assert_eq!(rules.effective(30 * S), 30 * S);
        assert_eq!(rules.effective(5 * S), 5 * S);
    }

    #[test]
    fn after_start_a_shorter_request_gets_the_check_period() {
        let mut rules = ResyncRules {
            check_period: 30 * S,
        };
        let admitted = rules.admit(5 * S, true);
        assert_eq!(admitted.requested, 30 * S);
        assert!(!admitted.lowered_check_period);
        assert_eq!(rules.check_period, 30 * S);
    }

    #[test]
    fn zero_means_never_and_a_zero_check_period_disables_every_handler() {
        let mut rules = ResyncRules {
            check_period: 30 * S,
        };
        assert_eq!(rules.admit(Duration::ZERO, false).requested, Duration::ZERO);
        assert_eq!(rules.effective(Duration::ZERO), Duration::ZERO);
        let mut never = ResyncRules {
            check_period: Duration::ZERO,
        };
        let admitted = never.admit(5 * S, false);
        assert_eq!(admitted.requested, 5 * S);
        assert_eq!(never.check_period, Duration::ZERO);
        assert_eq!(never.effective(5 * S), Duration::ZERO);
    }

    #[test]
    fn a_longer_request_keeps_its_period() {
        let rules = ResyncRules {
            check_period: 10 * S,
        };
        assert_eq!(rules.effective(25 * S), 25 * S);
    }
}
