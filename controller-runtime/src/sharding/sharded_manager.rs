//! A sharded manager's own part ([`ManagerBuilder::sharding`](crate::manager::ManagerBuilder::sharding)):
//! its shard, the kinds its controllers shard (it is the controllers' [`ShardHost`]), and what
//! it adds at start — the ring's sharder and the watch for the sharder's mark that makes the
//! shard ready.

use std::error::Error as StdError;
use std::sync::Arc;

use async_trait::async_trait;
use informer::InformerFactory;
#[cfg(feature = "webhook")]
use informer::{InformerScope, Selectors, SharedIndexInformer};
#[cfg(feature = "webhook")]
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use kube::core::ApiResource;

use crate::controller::{KindToShard, ObjectCount, ShardGuard, ShardHost};
use crate::ops::metrics::Metrics;
use crate::ops::runnable::Runnable;
use crate::rbac::Rule;
#[cfg(feature = "webhook")]
use crate::sharding::RING_LABEL;
use crate::sharding::guard::ReconcileGuard;
use crate::sharding::sharder::{ShardedKind, sharder_rules};
#[cfg(feature = "webhook")]
use crate::sharding::webhook::{AssignmentHook, assignment_webhook};
use crate::sharding::{
    Error, Shard, ShardMember, Sharder, SharderStats, ShardingConfig, ShardingSeries,
};

/// What makes a manager a shard of its ring.
pub(crate) struct ShardedManager {
    config: ShardingConfig,
    shard: Shard,
    /// The kinds the controllers shard, for the sharder built at start (and the assignment
    /// webhook).
    kinds: Arc<Mutex<Vec<ShardedKind>>>,
    /// The ring's shard Leases, for the assignment webhook.
    #[cfg(feature = "webhook")]
    leases: Arc<SharedIndexInformer<Lease>>,
    /// The sharder's counts (it runs in every replica; one leads).
    stats: Arc<SharderStats>,
    series: Arc<ShardingSeries>,
}

impl ShardedManager {
    /// The shard `config` describes, its Lease held through `client`, its series in `metrics`;
    /// the ring's Leases are cached with the manager's informers of `factory`.
    pub(crate) fn new(
        client: Client,
        config: ShardingConfig,
        metrics: &Metrics,
        factory: &InformerFactory,
    ) -> Result<Self, Error> {
        let member = ShardMember::new(client.clone(), &config, metrics)?;
        let shard = Shard::new(client, member);
        let stats = Arc::new(SharderStats::default());
        let series = Arc::new(ShardingSeries::new(shard.clone(), Arc::clone(&stats)));
        #[cfg(feature = "metrics")]
        crate::sharding::collector::register(metrics, Arc::clone(&series));
        #[cfg(feature = "webhook")]
        let leases = factory.informer_in::<Lease>(
            InformerScope::namespace(config.namespace())
                .selectors(Selectors::new().labels(format!("{RING_LABEL}={}", config.ring()))),
        );
        #[cfg(not(feature = "webhook"))]
        let _ = factory;
        Ok(Self {
            config,
            shard,
            kinds: Arc::default(),
            #[cfg(feature = "webhook")]
            leases,
            stats,
            series,
        })
    }

    /// This replica's shard.
    pub(crate) fn shard(&self) -> &Shard {
        &self.shard
    }

    /// The ring's sharder's counts, as this replica's candidate sees them.
    pub(crate) fn stats(&self) -> Arc<SharderStats> {
        Arc::clone(&self.stats)
    }

    /// The assignment webhook (feature `webhook`): labels new objects of the kinds sharded so
    /// far with their shard as they are created. Served on `/sharding/<ring>`.
    #[cfg(feature = "webhook")]
    pub(crate) fn webhook(&self) -> crate::webhook::Webhook {
        let hook = AssignmentHook::new(
            self.config.ring().to_owned(),
            self.shard.client().clone(),
            Arc::clone(&self.leases),
            Arc::clone(&self.kinds),
        );
        let path = format!("/sharding/{}", self.config.ring().replace('.', "-"));
        assignment_webhook(&path, hook, &self.kinds.lock())
    }

    /// What the ring's sharder needs (a shard's own Lease is leader election's).
    pub(crate) fn permissions(&self) -> Vec<Rule> {
        sharder_rules(self.config.namespace(), &self.kinds.lock())
    }

    /// What a sharded manager runs besides its controllers: the ring's sharder (a candidate for
    /// the ring's sharder Lease) and the watch for the sharder's mark.
    pub(crate) fn runnables(
        &self,
        client: Client,
        metrics: &Metrics,
    ) -> Result<Vec<Box<dyn Runnable>>, Error> {
        let sharder = Sharder::new(client, &self.config, metrics)?
            .with_stats(Arc::clone(&self.stats))
            .with_kinds(self.kinds.lock().iter().cloned());
        Ok(vec![
            Box::new(sharder),
            Box::new(AssignmentWatch(self.shard.member().clone())),
        ])
    }
}

impl ShardHost for ShardedManager {
    fn add_kind(&self, kind: KindToShard, namespaces: Option<Vec<String>>, objects: ObjectCount) {
        let kind =
            ShardedKind::new(kind.resource, kind.namespaced, kind.role).in_namespaces(namespaces);
        self.series.count_objects(&kind.resource.kind, objects);
        let mut kinds = self.kinds.lock();
        if !kinds.iter().any(|known| known.resource == kind.resource) {
            kinds.push(kind);
        }
    }

    fn guard(&self, resource: &ApiResource) -> Box<dyn ShardGuard> {
        Box::new(ReconcileGuard::new(self.shard.clone(), resource.clone()))
    }
}

/// Reads the shard Lease until the sharder marks the shard as given its share (`/readyz`
/// `shard` waits for it).
struct AssignmentWatch(ShardMember);

#[async_trait]
impl Runnable for AssignmentWatch {
    fn name(&self) -> &str {
        "shard-assignment"
    }

    fn need_leader_election(&self) -> bool {
        false
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        self.0.watch_assignment(shutdown).await;
        Ok(())
    }
}
