//! [`ShardingConfig`]: which ring a replica joins, under which shard name, where the shard
//! Leases live and how they are renewed, validated with errors that say what to fix.

use std::time::Duration;

use crate::leader_election::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, LeaderElectionConfig,
};
use crate::ops::leader_election::config::hostname;
use crate::sharding::error::Error;
use crate::sharding::labels::RING_LABEL;
use crate::sharding::ring::ShardName;

/// The longest label value, and name part of a label key.
const MAX_LABEL_LENGTH: usize = 63;

/// A replica's sharding settings: the ring it joins, its shard name (default: the hostname, so
/// a restarted pod of a StatefulSet gets its Lease back) and its shard Lease timings, which are
/// leader election's (default 15 s / 10 s / 2 s) with the same rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardingConfig {
    ring: String,
    namespace: String,
    shard: Option<ShardName>,
    lease_duration: Duration,
    renew_deadline: Duration,
    pub(crate) retry_period: Duration,
    sharder_resync: Duration,
    drain_handshake: bool,
}

/// The longest time between two passes of the sharder by default.
pub const DEFAULT_SHARDER_RESYNC: Duration = Duration::from_secs(10);

impl ShardingConfig {
    /// Join `ring`, with the shard Leases in `namespace`.
    pub fn new(ring: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            ring: ring.into(),
            namespace: namespace.into(),
            shard: None,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            sharder_resync: DEFAULT_SHARDER_RESYNC,
            drain_handshake: true,
        }
    }

    /// This replica's shard name (default: the hostname). Unique among the ring's replicas.
    pub fn shard(mut self, shard: impl Into<ShardName>) -> Self {
        self.shard = Some(shard.into());
        self
    }

    /// The shard Lease timings (default 15 s / 10 s / 2 s): how long the Lease lasts without
    /// renewal (the sharder waits twice this after the last renewal before it takes a silent
    /// shard's objects away), how long the shard keeps retrying a failing renewal before it stops
    /// working, and how often it renews. Leader election's rules apply.
    pub fn lease_timings(
        mut self,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Self {
        self.lease_duration = lease_duration;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry_period;
        self
    }

    /// The longest time between two passes of the ring's sharder (default 10 s): it passes after
    /// every change it sees anyway; this bounds how long a write lost to a conflict waits.
    pub fn sharder_resync_period(mut self, period: Duration) -> Self {
        self.sharder_resync = period;
        self
    }

    /// Whether objects leave a live shard only through the drain handshake (default: yes).
    /// `false` makes the sharder move them at once, while their old shard may still be working
    /// on them: two replicas then reconcile one object at the same time. It exists to show what
    /// the handshake prevents (a soak proves its checker catches it); never turn it off in an
    /// operator.
    pub fn drain_handshake(mut self, enabled: bool) -> Self {
        self.drain_handshake = enabled;
        self
    }

    /// The sharder's longest time between two passes.
    pub fn sharder_resync(&self) -> Duration {
        self.sharder_resync
    }

    /// Whether the drain handshake is on.
    pub fn drains(&self) -> bool {
        self.drain_handshake
    }

    /// The ring's name.
    pub fn ring(&self) -> &str {
        &self.ring
    }

    /// The shard Leases' namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// This replica's shard name: the one set, or the hostname.
    pub fn shard_name(&self) -> ShardName {
        self.shard
            .clone()
            .unwrap_or_else(|| ShardName::new(hostname()))
    }

    /// Checks the ring and shard names (usable in labels and as a Lease name), the namespace and
    /// the timings; fails with the [`Error`] of the first rule broken.
    pub fn validate(&self) -> Result<(), Error> {
        if let Err(reason) = check_label_value(&self.ring, false) {
            return Err(Error::InvalidRingName {
                ring: self.ring.clone(),
                reason,
            });
        }
        let shard = self.shard_name();
        let sharder_lease = self.sharder_lease_config("").lease_name().to_owned();
        let checked = check_label_value(shard.as_str(), true).and_then(|()| {
            if shard.as_str() == sharder_lease {
                Err("is the name of the ring's sharder Lease")
            } else {
                Ok(())
            }
        });
        if let Err(reason) = checked {
            return Err(Error::InvalidShardName {
                shard: shard.to_string(),
                reason,
            });
        }
        if self.namespace.is_empty() {
            return Err(Error::MissingNamespace);
        }
        if self.sharder_resync.is_zero() {
            return Err(Error::ZeroResync);
        }
        self.lease_config(&shard)
            .validate()
            .map_err(Error::LeaseTimings)
    }

    /// The leader-election settings that hold `shard`'s Lease: the shard is the Lease's name and
    /// its holder, and the Lease carries the ring label.
    pub(crate) fn lease_config(&self, shard: &ShardName) -> LeaderElectionConfig {
        LeaderElectionConfig::new(self.namespace.clone(), shard.as_str())
            .identity(shard.as_str())
            .lease_duration(self.lease_duration)
            .renew_deadline(self.renew_deadline)
            .retry_period(self.retry_period)
            .lease_labels([(RING_LABEL.to_owned(), self.ring.clone())].into())
    }
}

impl ShardingConfig {
    /// The Lease the ring's sharder candidates elect on: `<ring>-sharder` (lower case, `_` as
    /// `-`, so any ring name gives a valid Lease name), with the shard Leases' timings. It carries
    /// no ring label: it announces no shard.
    pub(crate) fn sharder_lease_config(&self, identity: &str) -> LeaderElectionConfig {
        let name = format!("{}-sharder", self.ring.to_lowercase().replace('_', "-"));
        LeaderElectionConfig::new(self.namespace.clone(), name)
            .identity(identity)
            .lease_duration(self.lease_duration)
            .renew_deadline(self.renew_deadline)
            .retry_period(self.retry_period)
    }
}

/// Whether `value` is a label value (and so the name part of a label key); with `lower_case`,
/// also a Lease name (no upper case, no '_').
fn check_label_value(value: &str, lower_case: bool) -> Result<(), &'static str> {
    let alphanumeric = |c: char| {
        c.is_ascii_digit() || c.is_ascii_lowercase() || (!lower_case && c.is_ascii_uppercase())
    };
    if value.is_empty() {
        return Err("is empty");
    }
    if value.len() > MAX_LABEL_LENGTH {
        return Err("is longer than 63 characters");
    }
    let inner = |c: char| alphanumeric(c) || c == '-' || c == '.' || (!lower_case && c == '_');
    if !value.chars().all(inner) {
        return Err("has a character that is not allowed");
    }
    let ends = [value.chars().next(), value.chars().last()];
    if !ends.into_iter().flatten().all(alphanumeric) {
        return Err("does not begin and end with a letter or digit");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ShardingConfig {
        ShardingConfig::new("web", "operators").shard("shard-0")
    }

    #[test]
    fn defaults_validate() {
        assert!(config().validate().is_ok());
        assert_eq!(config().shard_name().as_str(), "shard-0");
        assert_eq!(config().ring(), "web");
        assert_eq!(config().namespace(), "operators");
    }

    #[test]
    fn the_shard_name_defaults_to_the_hostname() {
        let config = ShardingConfig::new("web", "operators");
        assert_eq!(config.shard_name().as_str(), hostname());
    }

    #[test]
    fn refuses_names_unusable_in_labels() {
        let long = "a".repeat(64);
        for ring in ["", "-web", "web-", "we b", "web/x", long.as_str()] {
            let error = ShardingConfig::new(ring, "ns").shard("s").validate();
            assert!(
                matches!(error, Err(Error::InvalidRingName { .. })),
                "{ring:?}: {error:?}"
            );
        }
        for ring in ["Web_ring.v2", "a", "0"] {
            assert!(
                ShardingConfig::new(ring, "ns")
                    .shard("s")
                    .validate()
                    .is_ok(),
                "{ring:?}"
            );
        }
        for shard in ["", "Shard", "shard_0", "shard-", ".shard", long.as_str()] {
            let error = config().shard(shard).validate();
            assert!(
                matches!(error, Err(Error::InvalidShardName { .. })),
                "{shard:?}: {error:?}"
            );
        }
        let message = config()
            .shard("Shard")
            .validate()
            .map_err(|error| error.to_string());
        assert!(
            message.is_err_and(
                |message| message.contains("\"Shard\"") && message.contains("lower-case")
            )
        );
    }

    #[test]
    fn refuses_an_empty_namespace_and_bad_timings() {
        let error = ShardingConfig::new("web", "").shard("s").validate();
        assert!(matches!(error, Err(Error::MissingNamespace)), "{error:?}");
        let same = Duration::from_secs(5);
        let error = config()
            .lease_timings(same, same, Duration::from_secs(1))
            .validate();
        assert!(matches!(error, Err(Error::LeaseTimings(_))), "{error:?}");
        assert!(error.is_err_and(|error| error.to_string().contains("lease duration")));
    }

    #[test]
    fn the_lease_is_named_and_held_by_the_shard() {
        let lease = config().lease_config(&ShardName::from("shard-0"));
        assert_eq!(lease.lease_name(), "shard-0");
        assert_eq!(lease.lease_namespace(), "operators");
    }
}
