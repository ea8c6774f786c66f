//! [`ShardMember`]: a replica's membership in its ring, held by its shard Lease. It acquires
//! the Lease (creating it, or taking it back once it is free), renews it every retry period and
//! releases it on graceful shutdown, by the same rules and code as leader election: the shard is
//! the Lease's name and its holder identity, and the Lease carries the ring label so the sharder
//! finds it.

use kube::Client;
use tokio_util::sync::CancellationToken;

use crate::leader_election::LeaderElector;
use crate::metrics::Metrics;
use crate::sharding::config::ShardingConfig;
use crate::sharding::error::Error;
use crate::sharding::ring::ShardName;

/// How a [`ShardMember::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberEnd {
    /// Shutdown was asked for; the Lease was released if it was held (its shard is dead at once
    /// and its objects move without waiting for the Lease to expire).
    ShutDown,
    /// No renewal succeeded within the renew deadline: the shard must stop working on its
    /// objects, which the sharder will move once the Lease has been silent for two durations.
    LeaseLost,
}

/// This replica as a shard of its ring (see the [module docs](crate::sharding)). Cheap to clone.
#[derive(Clone, Debug)]
pub struct ShardMember {
    ring: String,
    shard: ShardName,
    elector: LeaderElector,
}

impl ShardMember {
    /// The member described by `config` (validated), holding its Lease through `client`. Its
    /// Lease shows in `metrics` as leader election's series for a Lease named after the shard.
    pub fn new(client: Client, config: &ShardingConfig, metrics: &Metrics) -> Result<Self, Error> {
        config.validate()?;
        let shard = config.shard_name();
        let elector = LeaderElector::new(client, config.lease_config(&shard), metrics)
            .map_err(Error::LeaseTimings)?;
        Ok(Self {
            ring: config.ring().to_owned(),
            shard,
            elector,
        })
    }

    /// The ring this replica is a shard of.
    pub fn ring(&self) -> &str {
        &self.ring
    }

    /// This replica's shard name.
    pub fn shard(&self) -> &ShardName {
        &self.shard
    }

    /// Whether this replica holds its Lease *now*: false before the first acquisition, and again
    /// from the renew deadline of the last successful renewal, even before [`run`](Self::run)
    /// notices. A shard works on its objects only while this holds.
    pub fn is_held(&self) -> bool {
        self.elector.is_leader()
    }

    /// Waits until the Lease is held. Returns `false` if `stop` fired first.
    pub async fn wait_held(&self, stop: &CancellationToken) -> bool {
        self.elector.wait_leading(stop).await
    }

    /// Acquires the Lease, then renews it until `shutdown` fires (and releases it) or a renewal
    /// misses the renew deadline.
    pub async fn run(&self, shutdown: CancellationToken) -> MemberEnd {
        if self.elector.run(shutdown).await {
            MemberEnd::LeaseLost
        } else {
            MemberEnd::ShutDown
        }
    }
}
