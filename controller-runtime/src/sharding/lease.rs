//! [`ShardLease`]: what the sharder reads from a shard's Lease: whose it is, which ring it
//! belongs to, who holds it and until when, and so the shard's [`ShardState`].

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;

use crate::sharding::labels::{ASSIGNED_ANNOTATION, RING_LABEL};
use crate::sharding::ring::ShardName;
use crate::sharding::state::{LeaseTimes, ShardState};

/// A shard's Lease as the sharder sees it. The Lease's name is the shard's name; the shard holds
/// it (holder identity = that name) while alive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardLease {
    shard: ShardName,
    ring: Option<String>,
    holder: Option<String>,
    renewed: Option<Timestamp>,
    duration: Option<Duration>,
    acquired: Option<String>,
    assigned: Option<String>,
}

impl ShardLease {
    /// The shard Lease described by `lease`; `None` for a Lease without a name (which only a
    /// malformed response could give).
    pub fn from_lease(lease: &Lease) -> Option<Self> {
        let shard = ShardName::new(
            lease
                .metadata
                .name
                .clone()
                .filter(|name| !name.is_empty())?,
        );
        let spec = lease.spec.as_ref();
        Some(Self {
            shard,
            ring: lease
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(RING_LABEL))
                .cloned(),
            holder: spec
                .and_then(|spec| spec.holder_identity.clone())
                .filter(|holder| !holder.is_empty()),
            renewed: spec
                .and_then(|spec| spec.renew_time.as_ref())
                .map(|time| time.0),
            duration: spec
                .and_then(|spec| spec.lease_duration_seconds)
                .and_then(|seconds| u64::try_from(seconds).ok())
                .filter(|seconds| *seconds > 0)
                .map(Duration::from_secs),
            acquired: spec
                .and_then(|spec| spec.acquire_time.as_ref())
                .map(|time| time.0.to_string()),
            assigned: lease
                .metadata
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.get(ASSIGNED_ANNOTATION))
                .cloned(),
        })
    }

    /// The shard (the Lease's name).
    pub fn shard(&self) -> &ShardName {
        &self.shard
    }

    /// The ring named by the Lease's ring label, if it has one.
    pub fn ring(&self) -> Option<&str> {
        self.ring.as_deref()
    }

    /// The holder identity (`None` when released).
    pub fn holder(&self) -> Option<&str> {
        self.holder.as_deref()
    }

    /// The last renewal, if recorded.
    pub fn renewed(&self) -> Option<Timestamp> {
        self.renewed
    }

    /// The Lease duration, if recorded and positive.
    pub fn duration(&self) -> Option<Duration> {
        self.duration
    }

    /// When the Lease was last acquired (RFC 3339), if recorded.
    pub fn acquired(&self) -> Option<&str> {
        self.acquired.as_deref()
    }

    /// Whether the sharder has marked the current holding as given its share: the
    /// [`ASSIGNED_ANNOTATION`] equals the Lease's acquisition time.
    pub fn is_assigned(&self) -> bool {
        self.acquired.is_some() && self.assigned == self.acquired
    }

    /// Whether the shard itself holds its Lease.
    pub fn held_by_shard(&self) -> bool {
        self.holder.as_deref() == Some(self.shard.as_str())
    }

    /// The shard's state at `now`.
    pub fn state(&self, now: Timestamp) -> ShardState {
        self.times().state(now).0
    }

    /// How long from `now` until the state can change by time alone (`None`: not by time; only
    /// a write to the Lease changes it). When the sharder should look again.
    pub fn next_change(&self, now: Timestamp) -> Option<Duration> {
        self.times().state(now).1
    }

    fn times(&self) -> LeaseTimes {
        LeaseTimes {
            held_by_shard: self.held_by_shard(),
            renewed: self.renewed,
            duration: self.duration,
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::SignedDuration;
    use kube::api::ObjectMeta;

    use super::*;
    use crate::sharding::state::ORPHAN_AFTER;

    const DURATION: i32 = 15;

    fn renewed_at() -> Timestamp {
        Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn lease(holder: Option<&str>, renewed: Option<Timestamp>, seconds: Option<i32>) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some("shard-a".into()),
                labels: Some([(RING_LABEL.to_owned(), "web".to_owned())].into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_owned),
                renew_time: renewed.map(MicroTime),
                lease_duration_seconds: seconds,
                ..LeaseSpec::default()
            }),
        }
    }

    fn at(seconds_after_renewal: i64) -> Timestamp {
        renewed_at() + SignedDuration::from_secs(seconds_after_renewal)
    }

    fn state_of(lease: &Lease, seconds_after_renewal: i64) -> ShardState {
        let parsed = ShardLease::from_lease(lease);
        assert!(parsed.is_some());
        parsed.map_or(ShardState::Orphaned, |shard| {
            shard.state(at(seconds_after_renewal))
        })
    }

    #[test]
    fn parses_the_lease() {
        let shard =
            ShardLease::from_lease(&lease(Some("shard-a"), Some(renewed_at()), Some(DURATION)));
        let Some(shard) = shard else {
            panic!("a named Lease parses")
        };
        assert_eq!(shard.shard().as_str(), "shard-a");
        assert_eq!(shard.ring(), Some("web"));
        assert_eq!(shard.holder(), Some("shard-a"));
        assert!(shard.held_by_shard());
        assert_eq!(shard.renewed(), Some(renewed_at()));
        assert_eq!(shard.duration(), Some(Duration::from_secs(15)));
        let mut unnamed = lease(None, None, None);
        unnamed.metadata.name = None;
        assert_eq!(ShardLease::from_lease(&unnamed), None);
    }

    /// Every boundary of the state table, for a Lease renewed at `r` with a 15 s duration.
    #[test]
    fn classifies_by_holder_and_time() {
        let own = lease(Some("shard-a"), Some(renewed_at()), Some(DURATION));
        let released = lease(None, Some(renewed_at()), Some(1));
        let empty_holder = lease(Some(""), Some(renewed_at()), Some(1));
        let by_sharder = lease(Some("sharder"), Some(renewed_at()), Some(2 * DURATION));
        let orphan = ORPHAN_AFTER.as_secs() as i64;
        let cases: &[(&str, &Lease, i64, ShardState)] = &[
            ("own, just renewed", &own, 0, ShardState::Ready),
            ("own, clock behind the renewal", &own, -5, ShardState::Ready),
            (
                "own, last second of the duration",
                &own,
                14,
                ShardState::Ready,
            ),
            ("own, at expiry", &own, 15, ShardState::Expired),
            ("own, just before 2d", &own, 29, ShardState::Expired),
            ("own, at 2d", &own, 30, ShardState::Uncertain),
            ("own, an hour late", &own, 3600, ShardState::Uncertain),
            ("released, now", &released, 0, ShardState::Dead),
            ("released, empty holder", &empty_holder, 0, ShardState::Dead),
            (
                "released, just before orphaned",
                &released,
                1 + orphan - 1,
                ShardState::Dead,
            ),
            (
                "released, orphaned",
                &released,
                1 + orphan,
                ShardState::Orphaned,
            ),
            ("acquired by the sharder", &by_sharder, 0, ShardState::Dead),
            (
                "acquired by the sharder, expired",
                &by_sharder,
                2 * 15 + 1,
                ShardState::Dead,
            ),
            (
                "acquired by the sharder, orphaned",
                &by_sharder,
                2 * 15 + orphan,
                ShardState::Orphaned,
            ),
        ];
        for (case, lease, seconds, expected) in cases {
            assert_eq!(state_of(lease, *seconds), *expected, "{case}");
        }
    }

    #[test]
    fn a_lease_without_times_proves_nothing() {
        for (holder, expected) in [
            (Some("shard-a"), ShardState::Uncertain),
            (None, ShardState::Orphaned),
        ] {
            for (renewed, seconds) in [
                (None, Some(DURATION)),
                (Some(renewed_at()), None),
                (Some(renewed_at()), Some(0)),
                (Some(renewed_at()), Some(-3)),
            ] {
                assert_eq!(
                    state_of(&lease(holder, renewed, seconds), 0),
                    expected,
                    "{holder:?} {renewed:?} {seconds:?}"
                );
            }
        }
        let no_spec = Lease {
            spec: None,
            ..lease(None, None, None)
        };
        assert_eq!(state_of(&no_spec, 0), ShardState::Orphaned);
    }

    #[test]
    fn only_ready_expired_and_uncertain_shards_are_on_the_ring() {
        let on_ring: Vec<_> = [
            ShardState::Ready,
            ShardState::Expired,
            ShardState::Uncertain,
            ShardState::Dead,
            ShardState::Orphaned,
        ]
        .into_iter()
        .filter(|state| state.is_available())
        .map(ShardState::as_str)
        .collect();
        assert_eq!(on_ring, ["ready", "expired", "uncertain"]);
    }

    /// `next_change` points exactly at the next boundary: the state differs one second later.
    #[test]
    fn next_change_is_the_next_boundary() {
        let own = lease(Some("shard-a"), Some(renewed_at()), Some(DURATION));
        let Some(shard) = ShardLease::from_lease(&own) else {
            panic!("parses")
        };
        let mut seconds = 0;
        let mut seen = vec![shard.state(at(seconds))];
        while let Some(wait) = shard.next_change(at(seconds)) {
            seconds += wait.as_secs() as i64;
            seen.push(shard.state(at(seconds)));
        }
        assert_eq!(
            seen,
            [
                ShardState::Ready,
                ShardState::Expired,
                ShardState::Uncertain
            ]
        );
        assert_eq!(seconds, 30);
    }
}
