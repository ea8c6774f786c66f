//! [`LeaderElectionConfig`]: which Lease to elect on, this candidate's identity, the timings
//! (validated as client-go does) and the leadership callbacks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::ops::leader_election::error::Error;

/// Default lease duration (controller-runtime's): how long standbys wait, from the last change
/// they observed, before taking a lease over.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// Default renew deadline: how long the leader keeps trying to renew before it stops leading.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// Default retry period: how often candidates try to acquire and the leader renews.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// client-go's `JitterFactor`: the renew deadline must exceed this many retry periods.
pub(super) const JITTER_FACTOR: f64 = 1.2;

pub(super) type Callback = Arc<dyn Fn() + Send + Sync>;
pub(super) type LeaderCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// Leader election settings; give them to
/// [`ManagerBuilder::leader_election`](crate::manager::ManagerBuilder::leader_election).
#[derive(Clone)]
pub struct LeaderElectionConfig {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) identity: Option<String>,
    pub(super) lease_duration: Duration,
    pub(super) renew_deadline: Duration,
    pub(super) retry_period: Duration,
    pub(super) release_on_cancel: bool,
    /// Labels the Lease carries (a shard Lease's ring label); none for a leader Lease.
    pub(super) lease_labels: BTreeMap<String, String>,
    pub(super) on_started_leading: Option<Callback>,
    pub(super) on_stopped_leading: Option<Callback>,
    pub(super) on_new_leader: Option<LeaderCallback>,
}

impl std::fmt::Debug for LeaderElectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElectionConfig")
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("release_on_cancel", &self.release_on_cancel)
            .finish_non_exhaustive()
    }
}

impl LeaderElectionConfig {
    /// Elect on the Lease `name` in `namespace`, with the default timings (15 s / 10 s / 2 s)
    /// and identity (hostname + random suffix).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            identity: None,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            release_on_cancel: true,
            lease_labels: BTreeMap::new(),
            on_started_leading: None,
            on_stopped_leading: None,
            on_new_leader: None,
        }
    }

    /// This candidate's identity, written as `holderIdentity` (default: the hostname, `_`, and
    /// a random suffix). Must be unique among the candidates.
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// How long standbys wait after the last observed change before taking over (default 15 s).
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader keeps retrying a failing renewal before it stops leading
    /// (default 10 s). Must be shorter than the lease duration.
    pub fn renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// How often candidates try to acquire and the leader renews (default 2 s).
    pub fn retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// Whether a graceful shutdown releases the lease so a standby takes over at its next try
    /// (default: yes). Without release, standbys wait the lease duration.
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// Called when this candidate starts leading.
    pub fn on_started_leading(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_started_leading = Some(Arc::new(callback));
        self
    }

    /// Called when this candidate stops leading (lost the lease, or released it).
    pub fn on_stopped_leading(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stopped_leading = Some(Arc::new(callback));
        self
    }

    /// Called with the identity of every new leader observed (this candidate included).
    pub fn on_new_leader(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Arc::new(callback));
        self
    }

    /// Labels the Lease is created with and keeps through every write (a shard Lease names its
    /// ring in one).
    pub(crate) fn lease_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.lease_labels = labels;
        self
    }

    /// The lease's namespace.
    pub fn lease_namespace(&self) -> &str {
        &self.namespace
    }

    /// The lease's name.
    pub fn lease_name(&self) -> &str {
        &self.name
    }

    /// Checks the timings as client-go does: renew deadline > 1.2 × retry period, lease
    /// duration > renew deadline, all positive; and a non-empty lease name. Fails with the
    /// [`Error`] of the first rule broken.
    pub fn validate(&self) -> Result<(), Error> {
        if self.name.is_empty() || self.namespace.is_empty() {
            return Err(Error::MissingLease);
        }
        if self.retry_period.is_zero() {
            return Err(Error::ZeroRetryPeriod);
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(Error::LeaseNotAboveDeadline {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(Error::DeadlineBelowRetries {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
                factor: JITTER_FACTOR,
            });
        }
        if self.identity.as_deref() == Some("") {
            return Err(Error::EmptyIdentity);
        }
        Ok(())
    }
}

/// The hostname and a random suffix, as controller-runtime builds its default identity.
pub(super) fn default_identity() -> String {
    let host = hostname();
    let suffix: String = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
    format!("{host}_{suffix}")
}

/// This machine's hostname (`$HOSTNAME`, else the kernel's), or `unknown`.
pub(crate) fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate() {
        assert!(LeaderElectionConfig::new("ns", "lease").validate().is_ok());
    }

    #[test]
    fn renew_deadline_must_exceed_jittered_retry_period() {
        let config = LeaderElectionConfig::new("ns", "lease")
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_secs(2));
        assert!(config.validate().unwrap_err().to_string().contains("1.2"));
    }

    #[test]
    fn lease_duration_must_exceed_renew_deadline() {
        let config = LeaderElectionConfig::new("ns", "lease")
            .lease_duration(Duration::from_secs(10))
            .renew_deadline(Duration::from_secs(10));
        assert!(
            config
                .validate()
                .unwrap_err()
                .to_string()
                .contains("lease duration")
        );
    }

    #[test]
    fn default_identity_has_a_random_suffix() {
        let (a, b) = (default_identity(), default_identity());
        assert_ne!(a, b);
        assert!(a.contains('_'));
    }
}
