//! [`Sharder`]: the runnable that keeps every object of a ring on the shard the ring wants
//! (`kinds`: the kinds it places; `pass`: one pass over its caches; `stats`: its counts).

mod kinds;
mod pass;
mod stats;

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use informer::{InformerFactory, InformerScope, Selectors, handler};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::DynamicObject;
use kube::core::PartialObjectMeta;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::kind::Kind;
use crate::leader_election::LeaderElector;
use crate::metrics::Metrics;
use crate::ops::runnable::Runnable;
use crate::rbac::{Rule, Verb};
use crate::sharding::config::ShardingConfig;
use crate::sharding::error::Error;
use crate::sharding::labels::RING_LABEL;

pub(crate) use kinds::{Role, ShardedKind};
use pass::{KindCache, PassContext, run_pass};
pub use stats::{SharderCounts, SharderStats};

/// How long the sharder waits for more changes before a pass, so a burst is handled at once.
const BATCH_DELAY: Duration = Duration::from_millis(20);
/// How long the caches may take to fill once leading.
const SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// The ring's sharder. Build it, name the kinds, add it to the manager of every replica.
///
/// The candidates elect on the ring's sharder Lease (`<ring>-sharder`), so exactly one works at
/// a time. The one leading watches the ring's shard Leases and the metadata of the ring's kinds,
/// and after every change (and whenever a Lease is due to change state by time alone) runs a
/// pass: silent shards are taken over, orphaned Leases deleted, unlabelled objects assigned,
/// objects on a live shard the ring no longer wants drained (or moved at once from a dead
/// shard), owned objects moved with their owner. It writes only the objects' sharding labels,
/// each write conditional on the resourceVersion it read.
///
/// It reads all objects of the ring's kinds, metadata only, in caches of its own (a shard's
/// caches select only its objects); with leadership lost it stops them and campaigns again.
pub struct Sharder {
    client: Client,
    config: ShardingConfig,
    identity: String,
    name: String,
    elector: LeaderElector,
    kinds: Vec<ShardedKind>,
    resync: Duration,
    stats: Arc<SharderStats>,
}

impl std::fmt::Debug for Sharder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharder")
            .field("ring", &self.config.ring())
            .field("identity", &self.identity)
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl Sharder {
    /// The sharder of `config`'s ring, a candidate named after `config`'s shard; its election
    /// shows in `metrics` as leader election's series for the `<ring>-sharder` Lease.
    pub fn new(client: Client, config: &ShardingConfig, metrics: &Metrics) -> Result<Self, Error> {
        config.validate()?;
        let identity = format!("sharder/{}", config.shard_name());
        let elector = LeaderElector::new(
            client.clone(),
            config.sharder_lease_config(&identity),
            metrics,
        )
        .map_err(Error::LeaseTimings)?;
        Ok(Self {
            client,
            name: format!("sharder/{}", config.ring()),
            config: config.clone(),
            identity,
            elector,
            kinds: Vec::new(),
            resync: config.sharder_resync().max(BATCH_DELAY),
            stats: Arc::default(),
        })
    }

    /// Objects of `K` are the ring's: each is assigned by the hash of its identity.
    pub fn shard<K: Kind>(mut self) -> Self {
        self.kinds.push(ShardedKind::of::<K>(Role::Key));
        self
    }

    /// Counts into `stats` (a sharded manager's, created before its sharder).
    pub(crate) fn with_stats(mut self, stats: Arc<SharderStats>) -> Self {
        self.stats = stats;
        self
    }

    /// Adds the kinds a sharded manager's controllers named.
    pub(crate) fn with_kinds(mut self, kinds: impl IntoIterator<Item = ShardedKind>) -> Self {
        self.kinds.extend(kinds);
        self
    }

    /// Objects of `K` follow their controller owner, an object of a kind given to
    /// [`shard`](Self::shard); objects of `K` with no such owner are left alone.
    pub fn owned<K: Kind>(mut self) -> Self {
        self.kinds.push(ShardedKind::of::<K>(Role::Owned));
        self
    }

    /// The longest time between two passes (default: the config's
    /// [`sharder_resync_period`](ShardingConfig::sharder_resync_period), 10 s).
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync = period.max(BATCH_DELAY);
        self
    }

    /// What the sharder has written so far (shared: read it at any time, also once the sharder
    /// has been handed to the manager).
    pub fn stats(&self) -> Arc<SharderStats> {
        self.stats.clone()
    }

    /// Whether this candidate is the ring's sharder now.
    pub fn is_leading(&self) -> bool {
        self.elector.is_leader()
    }

    /// Leads until `stop` fires: caches of the Leases and the kinds, then a pass after every
    /// change.
    async fn lead(&self, stop: &CancellationToken) -> Result<(), Error> {
        let factory = InformerFactory::new(self.client.clone());
        let changed = Arc::new(Notify::new());
        let ring_leases = Selectors::new().labels(format!("{RING_LABEL}={}", self.config.ring()));
        let leases = factory.informer_in::<Lease>(
            InformerScope::namespace(self.config.namespace()).selectors(ring_leases),
        );
        let notify = |changed: &Arc<Notify>| {
            let (add, update, delete) = (changed.clone(), changed.clone(), changed.clone());
            (
                move || add.notify_one(),
                move || update.notify_one(),
                move || delete.notify_one(),
            )
        };
        let (add, update, delete) = notify(&changed);
        leases
            .add_event_handler(
                handler::<Lease>()
                    .named("sharder")
                    .on_add(move |_, _| add())
                    .on_update(move |_, _| update())
                    .on_delete(move |_| delete()),
            )
            .map_err(Error::Cache)?;
        let mut caches: Vec<KindCache> = Vec::new();
        for kind in &self.kinds {
            let scopes = match &kind.namespaces {
                None => vec![InformerScope::all()],
                Some(namespaces) => namespaces
                    .iter()
                    .map(|namespace| InformerScope::namespace(namespace.as_str()))
                    .collect(),
            };
            let mut informers = Vec::new();
            for scope in scopes {
                let cache = factory.dynamic_metadata_informer(&kind.resource, scope);
                cache.set_transform(placement_only).map_err(Error::Cache)?;
                let (add, update, delete) = notify(&changed);
                cache
                    .add_event_handler(
                        handler::<PartialObjectMeta<DynamicObject>>()
                            .named("sharder")
                            .on_add(move |_, _| add())
                            .on_update(move |_, _| update())
                            .on_delete(move |_| delete()),
                    )
                    .map_err(Error::Cache)?;
                informers.push(cache);
            }
            caches.push((kind.clone(), informers));
        }
        factory.start();
        let synced = tokio::select! {
            synced = factory.wait_for_cache_sync(SYNC_TIMEOUT) => synced.map_err(Error::Cache),
            () = stop.cancelled() => Ok(()),
        };
        if let Err(error) = synced {
            factory.shutdown().await;
            return Err(error);
        }
        let context = PassContext {
            client: &self.client,
            ring: self.config.ring(),
            namespace: self.config.namespace(),
            identity: &self.identity,
            stats: &self.stats,
            stop,
            drain_handshake: self.config.drains(),
        };
        while !stop.is_cancelled() {
            let due = run_pass(&context, &leases, &caches).await;
            let wait = due.map_or(self.resync, |due| due.min(self.resync));
            tokio::select! {
                () = stop.cancelled() => break,
                () = changed.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
            tokio::select! {
                () = stop.cancelled() => break,
                () = tokio::time::sleep(BATCH_DELAY) => {}
            }
        }
        factory.shutdown().await;
        Ok(())
    }
}

#[async_trait]
impl Runnable for Sharder {
    fn name(&self) -> &str {
        &self.name
    }

    /// The sharder elects on its own Lease: it runs in every replica of a sharded manager, which
    /// elects no leader.
    fn need_leader_election(&self) -> bool {
        false
    }

    fn permissions(&self) -> Vec<Rule> {
        sharder_rules(self.config.namespace(), &self.kinds)
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        loop {
            let term = shutdown.child_token();
            // Aborted with this task too: a sharder dropped mid-term never renews again.
            let mut campaign = {
                let elector = self.elector.clone();
                let term = term.clone();
                Campaign(tokio::spawn(async move { elector.run(term).await }))
            };
            if !self.elector.wait_leading(&shutdown).await {
                term.cancel();
                let _ = (&mut campaign.0).await;
                return Ok(());
            }
            tracing::info!(ring = self.config.ring(), identity = %self.identity, "leading the ring's sharder");
            let leading = term.child_token();
            let lost = {
                let leading = leading.clone();
                let mut state = self.elector.subscribe();
                tokio::spawn(async move {
                    let _ = state.wait_for(|state| !state.is_leader).await;
                    leading.cancel();
                })
            };
            self.stats.set_leading(true);
            let led = self.lead(&leading).await;
            self.stats.set_leading(false);
            lost.abort();
            term.cancel();
            let _ = (&mut campaign.0).await;
            if shutdown.is_cancelled() {
                return Ok(());
            }
            match led {
                // Leadership lost: campaign again.
                Ok(()) => {
                    tracing::warn!(ring = self.config.ring(), identity = %self.identity, "lost the sharder Lease; campaigning again")
                }
                // Caches that would not fill: let another candidate try, then campaign again.
                Err(error) => {
                    tracing::error!(ring = self.config.ring(), identity = %self.identity, %error, "the sharder stepped down");
                    tokio::select! {
                        () = shutdown.cancelled() => return Ok(()),
                        () = tokio::time::sleep(self.resync) => {}
                    }
                }
            }
        }
    }
}

/// What the sharder keeps of an object: what placing it needs (its identity, labels, owner
/// references and version), so its caches of every object of the ring stay small.
fn placement_only(
    object: Arc<PartialObjectMeta<DynamicObject>>,
) -> Result<Arc<PartialObjectMeta<DynamicObject>>, Box<dyn StdError + Send + Sync>> {
    let meta = &object.metadata;
    let kept = ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        labels: meta.labels.clone(),
        owner_references: meta.owner_references.clone(),
        ..ObjectMeta::default()
    };
    let mut trimmed = Arc::unwrap_or_clone(object);
    trimmed.metadata = kept;
    Ok(Arc::new(trimmed))
}

/// The task campaigning for the sharder Lease, aborted when dropped.
struct Campaign(tokio::task::JoinHandle<bool>);

impl Drop for Campaign {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a sharder of a ring with Leases in `namespace` and `kinds` needs: the ring's shard
/// Leases watched, taken over when silent, marked once given their share and deleted when
/// orphaned; its own election Lease; and each kind's objects' metadata listed and watched and
/// their labels patched.
pub(crate) fn sharder_rules(namespace: &str, kinds: &[ShardedKind]) -> Vec<Rule> {
    let leases = Rule::of::<Lease>().in_namespace(namespace);
    let mut rules = vec![
        leases.clone().verbs([
            Verb::Get,
            Verb::List,
            Verb::Watch,
            Verb::Update,
            Verb::Patch,
            Verb::Delete,
        ]),
        leases.verbs([Verb::Create]),
    ];
    rules.extend(kinds.iter().flat_map(ShardedKind::rules));
    rules
}
