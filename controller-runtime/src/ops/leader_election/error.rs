//! The error of leader election: settings that cannot work.

use std::time::Duration;

/// Why leader election settings are refused (client-go's rules); reported by
/// [`LeaderElectionConfig::validate`](crate::leader_election::LeaderElectionConfig::validate)
/// and, for a manager that elects, by
/// [`Manager::start`](crate::manager::Manager::start).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The lease has no name or no namespace.
    #[error(
        "the lease namespace and name must not be empty; set them with `LeaderElectionConfig::new(namespace, name)`"
    )]
    MissingLease,

    /// The retry period is zero.
    #[error("the retry period must be positive (client-go's default is 2 s)")]
    ZeroRetryPeriod,

    /// The lease would expire before the leader gives up renewing it.
    #[error(
        "the lease duration ({lease_duration:?}) must be greater than the renew deadline ({renew_deadline:?}), or a standby could take over while the leader still acts"
    )]
    LeaseNotAboveDeadline {
        /// The lease duration given.
        lease_duration: Duration,
        /// The renew deadline given.
        renew_deadline: Duration,
    },

    /// The renew deadline leaves no room for a retry.
    #[error(
        "the renew deadline ({renew_deadline:?}) must be greater than {factor} × the retry period ({retry_period:?}), so a failed renewal can be retried before the deadline"
    )]
    DeadlineBelowRetries {
        /// The renew deadline given.
        renew_deadline: Duration,
        /// The retry period given.
        retry_period: Duration,
        /// The jitter factor the retries wait up to.
        factor: f64,
    },

    /// The identity is empty.
    #[error("the identity must not be empty; leave it unset for the hostname and a random suffix")]
    EmptyIdentity,
}
