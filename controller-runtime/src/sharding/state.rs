//! [`ShardState`]: what a shard Lease says about its shard at a given moment, by the rules of
//! the design this module follows.
//!
//! With `d` the Lease's duration and `r` its last renewal, a Lease held by its own shard (holder =
//! Lease name) is
//!
//! - [`Ready`](ShardState::Ready) until `r + d`;
//! - [`Expired`](ShardState::Expired) from `r + d` until `r + 2d`: late, but possibly only slow or
//!   cut off for a moment, so it keeps its objects;
//! - [`Uncertain`](ShardState::Uncertain) from `r + 2d`: the sharder should try to acquire the
//!   Lease. If it succeeds, the API server works and the shard did not renew, so it is gone.
//!
//! A Lease held by anyone else, or by nobody, is
//!
//! - [`Dead`](ShardState::Dead): released by its shard on shutdown, or acquired by the sharder;
//!   the shard's objects move at once, without draining (nobody is working on them);
//! - [`Orphaned`](ShardState::Orphaned) once it has been expired for [`ORPHAN_AFTER`]: the sharder
//!   deletes it.
//!
//! Ready, Expired and Uncertain shards are on the ring ([`is_available`](ShardState::is_available)).
//! A Lease without a renew time or a positive duration proves nothing about its shard and counts
//! as expired long ago (the original design treats it as expiring now, which keeps a broken Lease
//! on the ring forever).

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// How long a dead shard's Lease stays, counted from its expiry, before the sharder deletes it
/// (the original design's one minute).
pub const ORPHAN_AFTER: Duration = Duration::from_secs(60);

/// The state of a shard as its Lease shows it (see the [module docs](crate::sharding)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShardState {
    /// Held by the shard and renewed within its duration: on the ring.
    Ready,
    /// Not renewed for one to two durations: still on the ring, objects stay.
    Expired,
    /// Not renewed for two durations or more: still on the ring until the sharder acquires the
    /// Lease, which makes it dead.
    Uncertain,
    /// Released by the shard or acquired by the sharder: off the ring, objects move at once.
    Dead,
    /// Dead and expired for [`ORPHAN_AFTER`]: the Lease is garbage to delete.
    Orphaned,
}

impl ShardState {
    /// Whether the shard is on the ring (ready, expired or uncertain).
    pub fn is_available(self) -> bool {
        matches!(self, Self::Ready | Self::Expired | Self::Uncertain)
    }

    /// The state's name in lower case (`ready`, `expired`, ...), for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Expired => "expired",
            Self::Uncertain => "uncertain",
            Self::Dead => "dead",
            Self::Orphaned => "orphaned",
        }
    }
}

impl std::fmt::Display for ShardState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The facts of a Lease the state depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeaseTimes {
    /// Whether the Lease's holder is its own shard.
    pub(crate) held_by_shard: bool,
    /// The last renewal, if recorded.
    pub(crate) renewed: Option<Timestamp>,
    /// The Lease duration, if recorded and positive.
    pub(crate) duration: Option<Duration>,
}

impl LeaseTimes {
    /// How long past its expiry the Lease is at `now` (negative before it expires); `None` when
    /// the Lease records no renewal or duration.
    fn past_expiry(&self, now: Timestamp) -> Option<(SignedDuration, Duration)> {
        let renewed = self.renewed?;
        let duration = self.duration?;
        let lease = SignedDuration::try_from(duration).ok()?;
        Some((now.duration_since(renewed).checked_sub(lease)?, duration))
    }

    /// The state at `now`, and how long it lasts at most (`None`: until something writes the
    /// Lease).
    pub(crate) fn state(&self, now: Timestamp) -> (ShardState, Option<Duration>) {
        let past = self.past_expiry(now);
        if !self.held_by_shard {
            let until_orphaned = past.and_then(|(past, _)| remaining(past, ORPHAN_AFTER));
            return match until_orphaned {
                Some(left) => (ShardState::Dead, Some(left)),
                None => (ShardState::Orphaned, None),
            };
        }
        let Some((past, duration)) = past else {
            return (ShardState::Uncertain, None);
        };
        if let Some(left) = remaining(past, Duration::ZERO) {
            return (ShardState::Ready, Some(left));
        }
        match remaining(past, duration) {
            Some(left) => (ShardState::Expired, Some(left)),
            None => (ShardState::Uncertain, None),
        }
    }
}

/// How long until `past` reaches `limit`; `None` once it has.
fn remaining(past: SignedDuration, limit: Duration) -> Option<Duration> {
    let limit = SignedDuration::try_from(limit).ok()?;
    let left = limit.checked_sub(past)?;
    (left > SignedDuration::ZERO)
        .then(|| Duration::try_from(left).ok())
        .flatten()
}
