//! [`Membership`]: what the sharder makes of its ring's shard Leases at one moment: the ring of
//! the shards that are on it, the silent shards to take over, the dead Leases to delete, and
//! when the answer next changes by the clock alone.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::sharding::lease::ShardLease;
use crate::sharding::ring::{Ring, ShardName};
use crate::sharding::state::ShardState;

/// The shards of one ring as their Leases show them at one moment.
#[derive(Clone, Debug)]
pub(crate) struct Membership {
    /// The shards on the ring (ready, expired or uncertain).
    pub ring: Ring,
    /// Shards silent for two Lease durations: the sharder tries to take their Leases over.
    pub uncertain: Vec<ShardName>,
    /// Dead shards whose Leases are garbage now: the sharder deletes them.
    pub orphaned: Vec<ShardName>,
    /// How long until some Lease changes state with no write (`None`: none will).
    pub next_change: Option<Duration>,
}

/// The membership of `ring` from `leases` (Leases of other rings are ignored) at `now`.
pub(crate) fn membership(ring: &str, leases: &[ShardLease], now: Timestamp) -> Membership {
    let mut available = Vec::new();
    let mut uncertain = Vec::new();
    let mut orphaned = Vec::new();
    let mut next_change: Option<Duration> = None;
    for lease in leases.iter().filter(|lease| lease.ring() == Some(ring)) {
        let state = lease.state(now);
        if state.is_available() {
            available.push(lease.shard().clone());
        }
        match state {
            ShardState::Uncertain => uncertain.push(lease.shard().clone()),
            ShardState::Orphaned => orphaned.push(lease.shard().clone()),
            _ => {}
        }
        if let Some(change) = lease.next_change(now) {
            next_change = Some(next_change.map_or(change, |earliest| earliest.min(change)));
        }
    }
    Membership {
        ring: Ring::new(available),
        uncertain,
        orphaned,
        next_change,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
    use k8s_openapi::jiff::SignedDuration;

    use super::*;
    use crate::sharding::labels::RING_LABEL;

    fn lease(
        ring: &str,
        shard: &str,
        holder: &str,
        renewed_secs_ago: i64,
        now: Timestamp,
    ) -> ShardLease {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(shard.to_owned()),
                labels: Some([(RING_LABEL.to_owned(), ring.to_owned())].into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.to_owned()),
                lease_duration_seconds: Some(10),
                renew_time: Some(MicroTime(now - SignedDuration::from_secs(renewed_secs_ago))),
                ..LeaseSpec::default()
            }),
        };
        ShardLease::from_lease(&lease).expect("a named Lease")
    }

    #[test]
    fn the_ring_holds_live_shards_and_the_silent_and_dead_are_sorted_out() {
        let now = Timestamp::now();
        let leases = [
            lease("web", "ready", "ready", 1, now),
            lease("web", "expired", "expired", 15, now),
            lease("web", "silent", "silent", 25, now),
            lease("web", "released", "", 5, now),
            lease("web", "long-gone", "", 200, now),
            lease("jobs", "other-ring", "other-ring", 1, now),
        ];
        let membership = membership("web", &leases, now);
        let mut on_ring: Vec<&str> = membership
            .ring
            .shards()
            .iter()
            .map(ShardName::as_str)
            .collect();
        on_ring.sort_unstable();
        assert_eq!(on_ring, ["expired", "ready", "silent"]);
        assert_eq!(membership.uncertain, [ShardName::new("silent")]);
        assert_eq!(membership.orphaned, [ShardName::new("long-gone")]);
        // The expired shard turns uncertain in 5 s (before the ready one expires, in 9 s).
        assert_eq!(membership.next_change, Some(Duration::from_secs(5)));
    }
}
