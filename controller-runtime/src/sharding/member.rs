//! [`ShardMember`]: a replica's membership in its ring, held by its shard Lease. It acquires
//! the Lease (creating it, or taking it back once it is free), renews it every retry period and
//! releases it on graceful shutdown, by the same rules and code as leader election: the shard is
//! the Lease's name and its holder identity, and the Lease carries the ring label so the sharder
//! finds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, Client};
use tokio_util::sync::CancellationToken;

use crate::leader_election::LeaderElector;
use crate::metrics::Metrics;
use crate::sharding::config::ShardingConfig;
use crate::sharding::error::Error;
use crate::sharding::lease::ShardLease;
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
    leases: Api<Lease>,
    retry_period: Duration,
    assigned: Arc<AtomicBool>,
}

impl ShardMember {
    /// The member described by `config` (validated), holding its Lease through `client`. Its
    /// Lease shows in `metrics` as leader election's series for a Lease named after the shard.
    pub fn new(client: Client, config: &ShardingConfig, metrics: &Metrics) -> Result<Self, Error> {
        config.validate()?;
        let shard = config.shard_name();
        let lease = config.lease_config(&shard);
        let retry_period = config.retry_period;
        let leases = Api::namespaced(client.clone(), config.namespace());
        let elector = LeaderElector::new(client, lease, metrics).map_err(Error::LeaseTimings)?;
        Ok(Self {
            ring: config.ring().to_owned(),
            shard,
            elector,
            leases,
            retry_period,
            assigned: Arc::default(),
        })
    }

    /// The elector that holds the Lease (a sharded manager runs its controllers while it leads).
    pub(crate) fn elector(&self) -> &LeaderElector {
        &self.elector
    }

    /// Whether the ring's sharder has given this replica's current holding of its Lease its
    /// share of the ring (it marks the Lease with
    /// [`ASSIGNED_ANNOTATION`](crate::sharding::ASSIGNED_ANNOTATION)); false while the
    /// Lease is not held. A sharded manager's `/readyz` waits for it.
    pub fn is_assigned(&self) -> bool {
        self.is_held() && self.assigned.load(Ordering::SeqCst)
    }

    /// Reads the Lease every retry period while it is held, until the sharder's mark names the
    /// current holding (then [`is_assigned`](Self::is_assigned) holds) or `stop` fires.
    pub async fn watch_assignment(&self, stop: CancellationToken) {
        while !stop.is_cancelled() {
            if self.is_held() {
                match self.leases.get_opt(self.shard.as_str()).await {
                    Ok(Some(lease)) => {
                        if ShardLease::from_lease(&lease).is_some_and(|lease| lease.is_assigned()) {
                            self.assigned.store(true, Ordering::SeqCst);
                            tracing::info!(ring = %self.ring, shard = %self.shard, "the sharder gave this shard its share of the ring");
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(error) => {
                        tracing::debug!(ring = %self.ring, shard = %self.shard, %error, "cannot read the shard Lease; retrying")
                    }
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.retry_period) => {}
            }
        }
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
