//! [`take_over_uncertain_shard`]: how the sharder declares a silent shard dead. A shard whose
//! Lease has not been renewed for two durations is only *uncertain*: the sharder itself may be
//! the one cut off. So it acquires the Lease in its own name; that write succeeds only if the API
//! server works and the shard has not renewed since it was read (the write carries the
//! `resourceVersion` read). Once it succeeds the shard is dead and its objects can move at once.
//! The sharder holds the Lease for twice the shard's duration; if the shard comes back it waits
//! that out like any candidate and takes its Lease back.

use kube::Client;

use crate::ops::leader_election::record::{LeaseLock, Record, now_micro};
use crate::sharding::error::Error;
use crate::sharding::lease::ShardLease;
use crate::sharding::ring::ShardName;
use crate::sharding::state::ShardState;

/// What [`take_over_uncertain_shard`] found or did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Takeover {
    /// The sharder now holds the Lease: the shard is dead.
    Acquired,
    /// The shard is not uncertain (it renewed in time, or is already dead); nothing was written.
    NotUncertain(ShardState),
    /// The Lease changed between the read and the write (the shard renewed, or another sharder
    /// wrote): read it again before deciding.
    Conflict,
    /// The Lease does not exist (any more).
    Gone,
}

/// Acquires `shard`'s Lease in `namespace` for `sharder` (an identity that is no shard's name)
/// if the shard is [uncertain](ShardState::Uncertain) at the time of the read.
pub async fn take_over_uncertain_shard(
    client: Client,
    namespace: &str,
    shard: &ShardName,
    sharder: &str,
) -> Result<Takeover, Error> {
    let lease_error = |action: &'static str| {
        move |source: kube::Error| Error::Lease {
            action,
            namespace: namespace.to_owned(),
            shard: shard.to_string(),
            source: Box::new(source),
        }
    };
    let lock = LeaseLock::new(client, namespace, shard.as_str(), Default::default());
    let Some((old, lease)) = lock.get().await.map_err(lease_error("read"))? else {
        return Ok(Takeover::Gone);
    };
    let now = now_micro();
    let state =
        ShardLease::from_lease(&lease).map_or(ShardState::Orphaned, |parsed| parsed.state(now.0));
    if state != ShardState::Uncertain {
        return Ok(Takeover::NotUncertain(state));
    }
    let record = Record {
        holder: sharder.to_owned(),
        lease_duration_seconds: old.lease_duration_seconds.max(1).saturating_mul(2),
        acquire_time: Some(now.clone()),
        renew_time: Some(now),
        transitions: old.transitions.saturating_add(1),
    };
    match lock.update(lease, &record).await {
        Ok(()) => Ok(Takeover::Acquired),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Takeover::Conflict),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Takeover::Gone),
        Err(error) => Err(lease_error("acquire")(error)),
    }
}
