//! [`ManagerBuilder`]: a manager's configuration (namespace, selectors, timeouts, signals,
//! leader election, server addresses) and [`build`](ManagerBuilder::build), which assembles the
//! [`Manager`] — its informer factory, metrics registry, elector and built-in health checks.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use informer::{FifoKind, InformerFactory, Object, Selectors};
use kube::Client;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::cache::{ByObject, CacheOptions, Namespaces, Registry, Storage};
use crate::manager::error::Error;
use crate::manager::readiness::Readiness;
use crate::manager::running::Manager;
use crate::manager::shutdown::ShutdownHandle;
use crate::manager::state::State;
use crate::ops::health::Probes;
use crate::ops::leader_election::config::LeaderElectionConfig;
use crate::ops::leader_election::elector::LeaderElector;
use crate::ops::metrics::{InformerSet, Metrics};
use crate::ops::server::Bound;
use crate::sharding::{Error as ShardingError, ShardedManager, ShardingConfig, shard_selector};

/// How long `start` waits for the informer caches by default.
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a graceful shutdown may take by default.
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Configures a [`Manager`]; from [`Manager::builder`].
pub struct ManagerBuilder {
    client: Client,
    cache: CacheOptions,
    strip_managed_fields: bool,
    resync: Option<Duration>,
    fifo: FifoKind,
    pop_batch: Option<usize>,
    cache_sync_timeout: Duration,
    graceful_shutdown_timeout: Duration,
    handle_signals: bool,
    shutdown_token: Option<CancellationToken>,
    leader_election: Option<LeaderElectionConfig>,
    sharding: Option<ShardingConfig>,
    warm_up: bool,
    metrics_bind_address: Option<SocketAddr>,
    health_probe_bind_address: Option<SocketAddr>,
    #[cfg(feature = "webhook")]
    webhook_server: Option<crate::webhook::WebhookServerConfig>,
}

impl std::fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("default_namespaces", &self.cache.default_namespaces)
            .field("strip_managed_fields", &self.strip_managed_fields)
            .field("fifo", &self.fifo)
            .field("pop_batch", &self.pop_batch)
            .field("cache_sync_timeout", &self.cache_sync_timeout)
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
            .field("leader_election", &self.leader_election)
            .field("sharding", &self.sharding)
            .field("metrics_bind_address", &self.metrics_bind_address)
            .field("health_probe_bind_address", &self.health_probe_bind_address)
            .finish_non_exhaustive()
    }
}

impl ManagerBuilder {
    /// Watch namespaced types in `namespace` only (default: all namespaces); the same as
    /// [`default_namespaces`](Self::default_namespaces) with one namespace. Cluster-scoped
    /// types are always watched cluster-wide.
    pub fn namespace(self, namespace: impl Into<String>) -> Self {
        self.default_namespaces([namespace.into()])
    }

    /// Cache namespaced kinds in exactly these namespaces (controller-runtime's
    /// `DefaultNamespaces`; default: all namespaces): one watch per namespace, read as one
    /// cache per kind — listers span them, indexes cover them, and a kind has synced once
    /// every namespace has. Objects elsewhere are never cached nor reconciled, and reading
    /// another namespace is
    /// [`cache::Error::NamespaceNotCached`](crate::cache::Error::NamespaceNotCached). An empty set
    /// means all namespaces.
    /// [`by_object`](Self::by_object) overrides it per kind.
    pub fn default_namespaces<I, S>(mut self, namespaces: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let set: BTreeSet<String> = namespaces.into_iter().map(Into::into).collect();
        self.cache.default_namespaces = Namespaces::from_set(set);
        self
    }

    /// The label and field selectors of every watched type without its own (default: none).
    pub fn default_selectors(mut self, selectors: Selectors) -> Self {
        self.cache.default_selectors = selectors;
        self
    }

    /// The cache settings of one kind (controller-runtime's `ByObject`): its namespaces (for a
    /// namespaced kind), label and field selectors, and transform, overriding the manager's
    /// defaults for that kind — typed, metadata-only or dynamic. Several settings of one kind
    /// combine the same whatever their order (see [`ByObject`]); contradictory ones make
    /// [`Manager::start`] (and a controller watching the kind) fail with
    /// [`cache::Error::InvalidSettings`](crate::cache::Error::InvalidSettings).
    ///
    /// ```
    /// # use controller_runtime::cache::ByObject;
    /// # use controller_runtime::manager::Manager;
    /// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # fn configure(client: kube::Client) -> Manager {
    /// Manager::builder(client)
    ///     .default_namespaces(["shop", "billing", "audit"])
    ///     // Secrets: only in `shop`, only those this operator labels.
    ///     .by_object(ByObject::of::<Secret>().namespaces(["shop"]).labels("app=shop"))
    ///     // ConfigMaps: in the three default namespaces, without their binary data.
    ///     .by_object(ByObject::of::<ConfigMap>().transform(|cm| {
    ///         let mut cm = std::sync::Arc::unwrap_or_clone(cm);
    ///         cm.binary_data = None;
    ///         Ok(std::sync::Arc::new(cm))
    ///     }))
    ///     .build()
    /// # }
    /// ```
    pub fn by_object<T: Object>(mut self, settings: ByObject<T>) -> Self {
        self.cache.insert(settings);
        self
    }

    /// How the caches of typed kinds keep their objects unless a kind's [`ByObject::storage`]
    /// says otherwise (default: [`Storage::typed`]): [`Storage::compact`] keeps each object
    /// encoded and decodes it when read, for a fraction of the memory (see [`Storage`]). Kinds
    /// with a transform stay typed.
    ///
    /// ```
    /// # use controller_runtime::cache::Storage;
    /// # use controller_runtime::manager::Manager;
    /// # fn configure(client: kube::Client) -> Manager {
    /// Manager::builder(client).default_storage(Storage::compact()).build()
    /// # }
    /// ```
    pub fn default_storage(mut self, storage: Storage) -> Self {
        self.cache.default_storage = storage;
        self
    }

    /// Whether cached objects keep `metadata.managedFields` (default: stripped, which often
    /// halves the cache's memory). Pass `false` to keep them.
    pub fn strip_managed_fields(mut self, strip: bool) -> Self {
        self.strip_managed_fields = strip;
        self
    }

    /// Which fifo the informers of the manager's caches run on (default:
    /// [`FifoKind::Deltas`]; [`FifoKind::InOrder`] for client-go 1.36's in-order informers —
    /// `docs/fifos.md` compares the two).
    pub fn fifo(mut self, kind: FifoKind) -> Self {
        self.fifo = kind;
        self
    }

    /// The most items each informer of the manager's caches pops from its fifo at once, written
    /// to the cache under one lock (default: 1 000, client-go's). A batch holds the cache's
    /// write lock for all its writes, so readers listing the whole cache meanwhile wait longer:
    /// with workers that list whole caches in a loop, a smaller batch favours them over the
    /// cache's freshness (`docs/benchmarks.md`, "The informer with batches and without").
    pub fn pop_batch(mut self, max_items: usize) -> Self {
        self.pop_batch = Some(max_items);
        self
    }

    /// Replays every cached object to the controllers this often (default: never).
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// How long `start` waits for every informer to sync before failing (default 2 min).
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
        self
    }

    /// How long in-flight reconciles may take to finish after a shutdown request (default 30 s).
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// Whether SIGINT and SIGTERM shut the manager down (default: yes).
    pub fn handle_signals(mut self, handle: bool) -> Self {
        self.handle_signals = handle;
        self
    }

    /// Shut down when `token` is cancelled (a shutdown request, like a first signal).
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown_token = Some(token);
        self
    }

    /// Elect a leader among the replicas on a Lease (default: no election; every runnable runs).
    /// Runnables that [need leadership](crate::manager::Runnable::need_leader_election) — controllers, unless
    /// built with `need_leader_election(false)` — run only while this manager leads. When the
    /// lease is lost, they are aborted at once and [`start`](Manager::start) returns
    /// [`Error::LeadershipLost`]. A graceful shutdown drains them, then releases the lease.
    /// Invalid settings make `start` fail with [`Error::LeaderElection`].
    pub fn leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.leader_election = Some(config);
        self
    }

    /// Make this manager one shard of the ring `config` names, instead of one replica of many
    /// of which one leads (see [`sharding`](crate::sharding)): every replica works at once, each
    /// on the objects the ring assigns to it. The manager then
    ///
    /// - holds its shard Lease (acquired, renewed every retry period, released on graceful
    ///   shutdown) and runs its controllers while it holds it; a renewal that misses the renew
    ///   deadline stops them at once and [`start`](Manager::start) returns
    ///   [`Error::ShardLeaseLost`];
    /// - shards every controller built before `start`: its primary kind is cached with the
    ///   shard's label selector and assigned by the ring, the kinds it
    ///   [`owns`](crate::controller::ControllerBuilder::owns) are cached the same way and
    ///   follow their owner's shard (kinds it merely
    ///   [`watches`](crate::controller::ControllerBuilder::watches) are cached whole), and a
    ///   reconcile runs only for an object the shard may work on now
    ///   ([`Shard::admit`](crate::sharding::Shard::admit): a drain is acknowledged instead, an
    ///   object that moved away is skipped);
    /// - runs the ring's [`Sharder`](crate::sharding::Sharder) (every replica is a candidate;
    ///   one leads);
    /// - reports `/readyz` `shard` as failing until the sharder has given the shard its share,
    ///   and serves the sharding series on `/metrics`.
    ///
    /// Sharding and [`leader_election`](Self::leader_election) exclude each other; invalid
    /// settings make `start` fail with [`Error::Sharding`].
    pub fn sharding(mut self, config: ShardingConfig) -> Self {
        self.sharding = Some(config);
        self
    }

    /// With leader election: warm up before leading (default: no). The manager then starts
    /// every informer and syncs its caches before it holds the lease, and its controllers —
    /// unless built with [`warm_up(false)`](crate::controller::ControllerBuilder::warm_up) —
    /// start their external sources and fill their queues; only their workers wait, so a
    /// standby that takes over reconciles at once, without listing anything. A cold standby
    /// (the default) starts its informers only once it leads, except those of controllers built
    /// with `warm_up(true)`, and caches nothing else meanwhile.
    ///
    /// Off by default as in controller-runtime, whose `EnableWarmup` is opt-in: every warm
    /// standby lists and watches what the leader does, which doubles (or more) the watch load on
    /// the API server and holds the full caches' memory on every replica. Turn it on where the
    /// time to recover from a failover matters more than that.
    pub fn warm_up_before_leadership(mut self, warm_up: bool) -> Self {
        self.warm_up = warm_up;
        self
    }

    /// Serve `/metrics` on `address` (default: off). Port 0 picks a free port; read it from
    /// [`Manager::addresses`]. May equal the health probe address: one listener serves both.
    pub fn metrics_bind_address(mut self, address: SocketAddr) -> Self {
        self.metrics_bind_address = Some(address);
        self
    }

    /// Serve `/healthz` and `/readyz` on `address` (default: off). Port 0 picks a free port;
    /// read it from [`Manager::addresses`].
    pub fn health_probe_bind_address(mut self, address: SocketAddr) -> Self {
        self.health_probe_bind_address = Some(address);
        self
    }

    /// Run an admission and conversion webhook server with `config` (default: none; feature
    /// `webhook`). It starts with the probe servers, before the caches sync, on every replica
    /// (leader or not), and `/readyz` gets a `webhook` check that passes while it serves.
    /// Register webhooks with [`Manager::add_webhook`] and [`Manager::add_conversion`].
    #[cfg(feature = "webhook")]
    pub fn webhook_server(mut self, config: crate::webhook::WebhookServerConfig) -> Self {
        self.webhook_server = Some(config);
        self
    }

    /// The manager.
    pub fn build(self) -> Manager {
        // The cache strips managed fields itself, in the one transform of each kind's cache.
        let mut factory = InformerFactory::builder(self.client.clone())
            .selectors(self.cache.default_selectors.clone())
            .fifo(self.fifo);
        if let Some(max_items) = self.pop_batch {
            factory = factory.pop_batch(max_items);
        }
        if let Some(resync) = self.resync {
            factory = factory.default_resync(resync);
        }
        let factory = factory.build();
        let informers = InformerSet::default();
        let metrics = Metrics::new(informers.clone());
        let (sharded, sharding_error) = match self.sharding {
            None => (None, None),
            Some(_) if self.leader_election.is_some() => {
                (None, Some(ShardingError::WithLeaderElection))
            }
            Some(config) => {
                match ShardedManager::new(self.client.clone(), config, &metrics, &factory) {
                    Ok(sharded) => (Some(Arc::new(sharded)), None),
                    Err(error) => (None, Some(error)),
                }
            }
        };
        let elector = match &sharded {
            // A shard runs its controllers while it holds its Lease, as a leader while it leads.
            Some(sharded) => Some(Ok(sharded.shard().member().elector().clone())),
            None => self
                .leader_election
                .map(|config| LeaderElector::new(self.client.clone(), config, &metrics)),
        };
        let synced = Arc::new(AtomicBool::new(false));
        let probes = Arc::new(Probes::default());
        Readiness {
            synced: Arc::clone(&synced),
            elector: elector
                .as_ref()
                .and_then(|elector| elector.as_ref().ok().cloned()),
            warm_up: self.warm_up,
            factory: factory.clone(),
            shard: sharded
                .as_ref()
                .map(|sharded| sharded.shard().member().clone()),
        }
        .add_builtin_checks(&probes);
        #[cfg(feature = "webhook")]
        let webhooks = self.webhook_server.map(|config| {
            let server = crate::webhook::WebhookServer::with_metrics(config, Some(&metrics));
            // The name cannot collide with the other built-in checks.
            let _ = probes.add(
                crate::ops::health::Probe::Readyz,
                "webhook",
                Arc::new(server.started_checker()),
                true,
            );
            server
        });
        let mut registry = Registry::new(
            self.client,
            factory,
            self.cache,
            self.strip_managed_fields,
            self.cache_sync_timeout,
            informers,
        );
        if let Some(sharded) = &sharded {
            let shard = sharded.shard();
            registry = registry.sharded(shard_selector(shard.ring(), shard.name().as_str()));
        }
        Manager {
            registry: Arc::new(registry),
            sharded,
            sharding_error: Mutex::new(sharding_error),
            metrics,
            elector,
            warm_up: self.warm_up,
            synced,
            probes,
            metrics_bind_address: self.metrics_bind_address,
            health_probe_bind_address: self.health_probe_bind_address,
            bound: Mutex::new(Bound::default()),
            cache_sync_timeout: self.cache_sync_timeout,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            handle_signals: self.handle_signals,
            shutdown_token: self.shutdown_token,
            shutdown: ShutdownHandle::default(),
            state: Mutex::new(State::default()),
            #[cfg(feature = "webhook")]
            webhooks,
        }
    }
}

impl Manager {
    /// Starts configuring a manager over `client`.
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            cache: CacheOptions::default(),
            strip_managed_fields: true,
            fifo: FifoKind::default(),
            pop_batch: None,
            resync: None,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
            graceful_shutdown_timeout: DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
            handle_signals: true,
            shutdown_token: None,
            leader_election: None,
            sharding: None,
            warm_up: false,
            metrics_bind_address: None,
            health_probe_bind_address: None,
            #[cfg(feature = "webhook")]
            webhook_server: None,
        }
    }

    /// A manager with the default settings over a client inferred from the environment
    /// (kubeconfig or in-cluster), as `kube::Client::try_default` infers it, whose `User-Agent`
    /// names the running binary (`<binary>/unknown (<os>/<arch>) kube-rt/<version>`, see
    /// [`with_user_agent`](crate::util::with_user_agent) to name its version too). To configure
    /// one, start from `Manager::builder(client)`.
    pub async fn try_default() -> Result<Manager, Error> {
        let config = kube::Config::infer()
            .await
            .map_err(|e| Error::Client(kube::Error::InferConfig(e)))?;
        let config = crate::util::with_user_agent(config, &running_binary(), "unknown");
        let client = Client::try_from(config).map_err(Error::Client)?;
        Ok(Self::builder(client).build())
    }
}

/// The running binary's file name, as client-go's default User-Agent names it (`unknown` when
/// the process cannot tell).
fn running_binary() -> String {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}
