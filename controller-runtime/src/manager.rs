//! [`Manager`]: owns the client, the shared informers, the controllers and other runnables, and
//! runs them from cache sync to graceful shutdown.

use std::any::TypeId;
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use informer::{InformerFactory, Object, Selectors, SharedIndexInformer};
use kube::core::NamespaceScope;
use kube::{Client, Resource};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::cache::{Cache, Shared};
use crate::error::Error;
use crate::health::{self, Check, Endpoints, Probe, Probes};
use crate::leader_election::{LeaderElectionConfig, LeaderElector};
use crate::metrics::{InformerSet, Metrics};
use crate::runnable::Runnable;
use crate::scope::WatchScope;
use crate::shutdown::{ShutdownHandle, listen_for_signals};

/// How long `start` waits for the informer caches by default.
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a graceful shutdown may take by default.
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Configures a [`Manager`]; from [`Manager::builder`].
pub struct ManagerBuilder {
    client: Client,
    namespace: Option<String>,
    default_selectors: Selectors,
    selectors: HashMap<TypeId, Selectors>,
    strip_managed_fields: bool,
    resync: Option<Duration>,
    cache_sync_timeout: Duration,
    graceful_shutdown_timeout: Duration,
    handle_signals: bool,
    shutdown_token: Option<CancellationToken>,
    leader_election: Option<LeaderElectionConfig>,
    warm_up: bool,
    metrics_bind_address: Option<SocketAddr>,
    health_probe_bind_address: Option<SocketAddr>,
}

impl std::fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("namespace", &self.namespace)
            .field("strip_managed_fields", &self.strip_managed_fields)
            .field("cache_sync_timeout", &self.cache_sync_timeout)
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
            .field("leader_election", &self.leader_election)
            .field("metrics_bind_address", &self.metrics_bind_address)
            .field("health_probe_bind_address", &self.health_probe_bind_address)
            .finish_non_exhaustive()
    }
}

impl ManagerBuilder {
    /// Watch namespaced types in `namespace` only (default: all namespaces). Cluster-scoped
    /// types are always watched cluster-wide.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The label and field selectors of every watched type without its own (default: none).
    pub fn default_selectors(mut self, selectors: Selectors) -> Self {
        self.default_selectors = selectors;
        self
    }

    /// The selectors of the namespaced type `K`: only matching objects are cached and reconciled.
    pub fn selectors_for<K>(mut self, selectors: Selectors) -> Self
    where
        K: Resource<DynamicType = ()> + 'static,
        K::Scope: NamespaceScope,
    {
        self.selectors.insert(TypeId::of::<K>(), selectors);
        self
    }

    /// Whether cached objects keep `metadata.managedFields` (default: stripped, which often
    /// halves the cache's memory). Pass `false` to keep them.
    pub fn strip_managed_fields(mut self, strip: bool) -> Self {
        self.strip_managed_fields = strip;
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
    /// Runnables that [need leadership](Runnable::need_leader_election) — controllers, unless
    /// built with `need_leader_election(false)` — run only while this manager leads. When the
    /// lease is lost, they are aborted at once and [`start`](Manager::start) returns
    /// [`Error::LeadershipLost`]. A graceful shutdown drains them, then releases the lease.
    /// Invalid settings make `start` fail with [`Error::LeaderElection`].
    pub fn leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.leader_election = Some(config);
        self
    }

    /// With leader election: start the informers and sync the caches *before* acquiring the
    /// lease, so a standby that takes over starts reconciling at once (default: no — a standby
    /// starts its informers only once it leads, and caches nothing meanwhile). Controllers'
    /// queues fill while waiting; their workers start with leadership.
    pub fn warm_up_before_leadership(mut self, warm_up: bool) -> Self {
        self.warm_up = warm_up;
        self
    }

    /// Serve `/metrics` on `address` (default: off). Port 0 picks a free port; read it from
    /// [`Manager::metrics_addr`]. May equal the health probe address: one listener serves both.
    pub fn metrics_bind_address(mut self, address: SocketAddr) -> Self {
        self.metrics_bind_address = Some(address);
        self
    }

    /// Serve `/healthz` and `/readyz` on `address` (default: off). Port 0 picks a free port;
    /// read it from [`Manager::health_probe_addr`].
    pub fn health_probe_bind_address(mut self, address: SocketAddr) -> Self {
        self.health_probe_bind_address = Some(address);
        self
    }

    /// The manager.
    pub fn build(self) -> Manager {
        let mut factory = InformerFactory::builder(self.client.clone())
            .selectors(self.default_selectors)
            .strip_managed_fields(self.strip_managed_fields);
        if let Some(resync) = self.resync {
            factory = factory.default_resync(resync);
        }
        let informers = InformerSet::default();
        let metrics = Metrics::new(informers.clone());
        let elector = self
            .leader_election
            .map(|config| LeaderElector::new(self.client.clone(), config, &metrics));
        let synced = Arc::new(AtomicBool::new(false));
        let probes = Arc::new(Probes::default());
        let ready = Readiness {
            synced: Arc::clone(&synced),
            elector: elector
                .as_ref()
                .and_then(|elector| elector.as_ref().ok().cloned()),
            warm_up: self.warm_up,
        };
        // Built-in checks; the names cannot collide in an empty registry.
        let _ = probes.add(Probe::Healthz, "ping", Arc::new(health::ping), false);
        let caches = ready.clone();
        let _ = probes.add(
            Probe::Readyz,
            "informers",
            Arc::new(move || caches.caches_ready()),
            true,
        );
        if ready.elector.is_some() {
            let elector = ready.clone();
            let _ = probes.add(
                Probe::Readyz,
                "leader-election",
                Arc::new(move || elector.elector_running()),
                true,
            );
        }
        Manager {
            shared: Arc::new(Shared {
                client: self.client,
                factory: factory.build(),
                namespace: self.namespace,
                selectors: self.selectors,
                cached: Mutex::new(HashSet::new()),
                informers,
            }),
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
        }
    }
}

/// The built-in readiness conditions.
#[derive(Clone)]
struct Readiness {
    synced: Arc<AtomicBool>,
    elector: Option<LeaderElector>,
    warm_up: bool,
}

impl Readiness {
    fn caches_ready(&self) -> Result<(), String> {
        if self.synced.load(Ordering::SeqCst) {
            return Ok(());
        }
        // A standby without warm-up starts its informers only once it leads.
        if let Some(elector) = &self.elector
            && !self.warm_up
            && elector.is_running()
            && !elector.is_leader()
        {
            return Ok(());
        }
        Err("caches not synced yet".to_owned())
    }

    fn elector_running(&self) -> Result<(), String> {
        match &self.elector {
            Some(elector) if elector.is_running() => Ok(()),
            _ => Err("leader elector not running".to_owned()),
        }
    }
}

/// Addresses the servers were bound to.
#[derive(Default)]
struct Bound {
    metrics: Option<SocketAddr>,
    probes: Option<SocketAddr>,
}

#[derive(Default)]
struct State {
    runnables: Vec<Box<dyn Runnable>>,
    names: HashSet<String>,
    started: bool,
}

/// Owns one [`InformerFactory`] (so every controller shares one cache and one watch per type),
/// the controllers and other [`Runnable`]s.
///
/// [`start`](Self::start) starts the informers, waits for their caches (failing with the names
/// of those that did not sync within the cache-sync timeout), runs every runnable, and returns
/// after a shutdown request — SIGINT/SIGTERM, the builder's cancellation token or a
/// [`ShutdownHandle`] — once in-flight reconciles drained (bounded by the graceful shutdown
/// timeout). A second request returns at once.
pub struct Manager {
    shared: Arc<Shared>,
    cache_sync_timeout: Duration,
    graceful_shutdown_timeout: Duration,
    handle_signals: bool,
    shutdown_token: Option<CancellationToken>,
    shutdown: ShutdownHandle,
    state: Mutex<State>,
    metrics: Metrics,
    elector: Option<Result<LeaderElector, String>>,
    warm_up: bool,
    synced: Arc<AtomicBool>,
    probes: Arc<Probes>,
    metrics_bind_address: Option<SocketAddr>,
    health_probe_bind_address: Option<SocketAddr>,
    bound: Mutex<Bound>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("namespace", &self.shared.namespace)
            .field("informers", &self.shared.factory.len())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// Starts configuring a manager over `client`.
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            namespace: None,
            default_selectors: Selectors::default(),
            selectors: HashMap::new(),
            strip_managed_fields: true,
            resync: None,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
            graceful_shutdown_timeout: DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
            handle_signals: true,
            shutdown_token: None,
            leader_election: None,
            warm_up: false,
            metrics_bind_address: None,
            health_probe_bind_address: None,
        }
    }

    /// This manager's metrics registry (one per manager).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The leader elector, if the manager elects (and its settings are valid).
    pub fn elector(&self) -> Option<&LeaderElector> {
        self.elector
            .as_ref()
            .and_then(|elector| elector.as_ref().ok())
    }

    /// Whether this manager may act: it leads, or it does not elect at all.
    pub fn is_leader(&self) -> bool {
        match &self.elector {
            None => true,
            Some(Ok(elector)) => elector.is_leader(),
            Some(Err(_)) => false,
        }
    }

    /// The address `/metrics` is served on, once [`start`](Self::start) bound it.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.bound.lock().metrics
    }

    /// The address `/healthz` and `/readyz` are served on, once [`start`](Self::start) bound it.
    pub fn health_probe_addr(&self) -> Option<SocketAddr> {
        self.bound.lock().probes
    }

    /// Whether the informer caches have synced.
    pub fn has_synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    /// Adds a liveness check, run on every `/healthz` request; a failure answers 500 with the
    /// check's name and reason.
    pub fn add_healthz_check(
        &self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let check: Check = Arc::new(check);
        self.probes
            .add(Probe::Healthz, name, check, false)
            .map_err(Error::DuplicateCheck)
    }

    /// Adds a readiness check, run on every `/readyz` request; a failure answers 500 with the
    /// check's name and reason.
    pub fn add_readyz_check(
        &self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let check: Check = Arc::new(check);
        self.probes
            .add(Probe::Readyz, name, check, false)
            .map_err(Error::DuplicateCheck)
    }

    /// A manager over a client inferred from the environment (kubeconfig or in-cluster).
    pub async fn try_default() -> Result<ManagerBuilder, Error> {
        Ok(Self::builder(Client::try_default().await?))
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Read access to the caches.
    pub fn cache(&self) -> Cache {
        Cache {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The manager's shared informer for `K` (scoped by the manager's namespace and selectors),
    /// for adding indexes or handlers, or to cache a type no controller watches. Request it
    /// before `start`.
    pub fn informer<K>(&self) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: WatchScope,
    {
        self.shared.informer::<K>()
    }

    /// A handle that requests this manager's shutdown.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    pub(crate) fn cache_sync_timeout(&self) -> Duration {
        self.cache_sync_timeout
    }

    /// Reserves a controller name; fails if it is taken or the manager has started.
    pub(crate) fn reserve_name(&self, name: &str) -> Result<(), Error> {
        let mut state = self.state.lock();
        if state.started {
            return Err(Error::AlreadyStarted);
        }
        if !state.names.insert(name.to_owned()) {
            return Err(Error::DuplicateName(name.to_owned()));
        }
        Ok(())
    }

    /// Adds a runnable, run from `start` after the caches synced.
    pub fn add(&self, runnable: impl Runnable) -> Result<(), Error> {
        let mut state = self.state.lock();
        if state.started {
            return Err(Error::AlreadyStarted);
        }
        state.runnables.push(Box::new(runnable));
        Ok(())
    }

    /// Runs the manager until a shutdown request (see [`Manager`]). Fails if the caches do not
    /// sync in time, if a runnable fails, if the graceful shutdown times out, if a second
    /// shutdown request forced the exit, or — when electing — if leadership is lost
    /// ([`Error::LeadershipLost`]).
    ///
    /// Order: metrics and probe servers; the leader elector; informers and cache sync (after
    /// leadership is acquired, unless warming up); runnables that do not need leadership;
    /// once leading, the others (controllers).
    pub async fn start(&self) -> Result<(), Error> {
        let runnables = {
            let mut state = self.state.lock();
            if state.started {
                return Err(Error::AlreadyStarted);
            }
            state.started = true;
            std::mem::take(&mut state.runnables)
        };
        let elector = match &self.elector {
            None => None,
            Some(Ok(elector)) => Some(elector.clone()),
            Some(Err(reason)) => return Err(Error::LeaderElection(reason.clone())),
        };
        let _signals = if self.handle_signals {
            Some(AbortOnDrop(
                listen_for_signals(self.shutdown.clone()).map_err(Error::Signal)?,
            ))
        } else {
            None
        };
        let _token = self.shutdown_token.clone().map(|token| {
            let handle = self.shutdown.clone();
            AbortOnDrop(tokio::spawn(async move {
                token.cancelled().await;
                handle.shutdown();
            }))
        });
        let servers = CancellationToken::new();
        let _stop_servers = servers.clone().drop_guard();
        self.start_servers(&servers).await?;

        // The elector runs until the runnables drained (then it releases the lease).
        let elector_stop = CancellationToken::new();
        let lost = CancellationToken::new();
        // Aborted if `start` is dropped (a killed manager never releases the lease).
        let mut elector_task = elector.clone().map(|elector| {
            let (stop, lost) = (elector_stop.clone(), lost.clone());
            AbortOnDrop(tokio::spawn(async move {
                if elector.run(stop).await {
                    lost.cancel();
                }
            }))
        });
        let (leader_runnables, runnables): (Vec<_>, Vec<_>) = runnables
            .into_iter()
            .partition(|runnable| elector.is_some() && runnable.need_leader_election());

        let outcome = self
            .run_runnables(elector.as_ref(), leader_runnables, runnables, &lost)
            .await;

        // Release only after every leader runnable stopped, so no standby acts meanwhile.
        elector_stop.cancel();
        if let Some(task) = elector_task.as_mut() {
            let _ = (&mut task.0).await;
        }
        let factory = &self.shared.factory;
        if matches!(outcome, Err(Error::ForcedShutdown)) {
            // Exit at once: the informers stop in the background.
            let factory = factory.clone();
            tokio::spawn(async move { factory.shutdown().await });
        } else {
            factory.shutdown().await;
        }
        tracing::info!("manager stopped");
        outcome
    }

    /// Binds and spawns the metrics and probe servers (stopped with `stop`).
    async fn start_servers(&self, stop: &CancellationToken) -> Result<(), Error> {
        let mut listeners: Vec<(SocketAddr, Endpoints, &'static str)> = Vec::new();
        if let Some(address) = self.metrics_bind_address {
            listeners.push((
                address,
                Endpoints {
                    metrics: Some(self.metrics.clone()),
                    probes: None,
                },
                "metrics",
            ));
        }
        if let Some(address) = self.health_probe_bind_address {
            match listeners.iter_mut().find(|(bound, _, _)| *bound == address) {
                Some((_, endpoints, _)) => endpoints.probes = Some(Arc::clone(&self.probes)),
                None => listeners.push((
                    address,
                    Endpoints {
                        metrics: None,
                        probes: Some(Arc::clone(&self.probes)),
                    },
                    "health probes",
                )),
            }
        }
        for (address, endpoints, what) in listeners {
            let (listener, bound) = health::bind(address).await.map_err(|source| Error::Bind {
                what,
                address,
                source,
            })?;
            {
                let mut addresses = self.bound.lock();
                if endpoints.metrics.is_some() {
                    addresses.metrics = Some(bound);
                }
                if endpoints.probes.is_some() {
                    addresses.probes = Some(bound);
                }
            }
            tracing::info!(%bound, what, "serving");
            tokio::spawn(health::serve(listener, endpoints, stop.clone()));
        }
        Ok(())
    }

    /// Syncs the caches and runs the runnables (leader-only ones while leading) until a
    /// shutdown request, a failure or lost leadership; then stops them.
    async fn run_runnables(
        &self,
        elector: Option<&LeaderElector>,
        leader_runnables: Vec<Box<dyn Runnable>>,
        runnables: Vec<Box<dyn Runnable>>,
        lost: &CancellationToken,
    ) -> Result<(), Error> {
        let graceful = self.shutdown.graceful();
        let warm_up = elector.is_none() || self.warm_up;
        if !warm_up && let Some(elector) = elector {
            tracing::info!(identity = %elector.identity(), "waiting for leadership before starting informers");
            if !elector.wait_leading(graceful).await {
                return Ok(());
            }
        }
        let factory = &self.shared.factory;
        factory.start();
        tracing::info!(informers = factory.len(), "waiting for caches to sync");
        tokio::select! {
            synced = factory.wait_for_cache_sync(self.cache_sync_timeout) => {
                if let Err(error) = synced {
                    return Err(Error::CacheSync(error));
                }
            }
            () = graceful.cancelled() => return Ok(()),
            () = lost.cancelled() => return Err(Error::LeadershipLost),
        }
        self.synced.store(true, Ordering::SeqCst);
        tracing::info!(
            runnables = runnables.len(),
            "caches synced; starting runnables"
        );

        let stop = CancellationToken::new();
        let mut tasks = JoinSet::new();
        spawn_all(&mut tasks, runnables, &stop);
        let mut leader_tasks = JoinSet::new();
        let mut pending_leader = Some(leader_runnables);
        if let Some(elector) = elector {
            if warm_up && !elector.is_leader() {
                tracing::info!(identity = %elector.identity(), "caches warm; waiting for leadership");
            }
        } else if let Some(runnables) = pending_leader.take() {
            spawn_all(&mut leader_tasks, runnables, &stop);
        }
        let leading = async {
            match elector {
                Some(elector) => elector.wait_leading(graceful).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(leading);
        let mut failure = None;
        let mut lost_leadership = false;
        loop {
            tokio::select! {
                () = graceful.cancelled() => break,
                () = lost.cancelled() => {
                    lost_leadership = true;
                    break;
                }
                leads = &mut leading, if pending_leader.is_some() => {
                    if leads && let Some(runnables) = pending_leader.take() {
                        tracing::info!(runnables = runnables.len(), "leading; starting leader runnables");
                        spawn_all(&mut leader_tasks, runnables, &stop);
                    } else {
                        pending_leader = None;
                    }
                }
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    if let Some(error) = runnable_error(joined) {
                        tracing::error!(%error, "runnable failed; shutting down");
                        failure = Some(error);
                        break;
                    }
                }
                Some(joined) = leader_tasks.join_next(), if !leader_tasks.is_empty() => {
                    if let Some(error) = runnable_error(joined) {
                        tracing::error!(%error, "runnable failed; shutting down");
                        failure = Some(error);
                        break;
                    }
                }
            }
        }
        if lost_leadership {
            // Never act after losing the lease: no drain for leader runnables.
            leader_tasks.abort_all();
            tracing::error!("leadership lost; leader runnables aborted");
        }
        stop.cancel();
        let drain = async {
            loop {
                tokio::select! {
                    () = lost.cancelled(), if !leader_tasks.is_empty() => {
                        leader_tasks.abort_all();
                        lost_leadership = true;
                        while leader_tasks.join_next().await.is_some() {}
                    }
                    Some(joined) = leader_tasks.join_next(), if !leader_tasks.is_empty() => {
                        if let Some(error) = runnable_error(joined) {
                            tracing::error!(%error, "runnable failed while shutting down");
                        }
                    }
                    Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                        if let Some(error) = runnable_error(joined) {
                            tracing::error!(%error, "runnable failed while shutting down");
                        }
                    }
                    else => break,
                }
            }
        };
        let outcome = tokio::select! {
            () = drain => Ok(()),
            () = tokio::time::sleep(self.graceful_shutdown_timeout) => {
                Err(Error::ShutdownTimeout(self.graceful_shutdown_timeout))
            }
            () = self.shutdown.forced().cancelled() => Err(Error::ForcedShutdown),
        };
        leader_tasks.abort_all();
        tasks.abort_all();
        if lost_leadership {
            return Err(Error::LeadershipLost);
        }
        match failure {
            Some(error) => Err(error),
            None => outcome,
        }
    }
}

/// Spawns every runnable into `tasks`, each with a child token of `stop`.
fn spawn_all(
    tasks: &mut JoinSet<RunnableExit>,
    runnables: Vec<Box<dyn Runnable>>,
    stop: &CancellationToken,
) {
    for runnable in runnables {
        let token = stop.child_token();
        tasks.spawn(async move {
            let name = runnable.name().to_owned();
            let result = runnable.run(token).await;
            (name, result)
        });
    }
}

/// What a runnable task returns: its name and its result.
type RunnableExit = (String, Result<(), Box<dyn std::error::Error + Send + Sync>>);

/// The error of a finished runnable task, if it failed or panicked.
fn runnable_error(joined: Result<RunnableExit, tokio::task::JoinError>) -> Option<Error> {
    match joined {
        Ok((_, Ok(()))) => None,
        Ok((name, Err(error))) => Some(Error::Runnable {
            name,
            message: error.to_string(),
        }),
        Err(error) => Some(Error::Runnable {
            name: "unknown".to_owned(),
            message: error.to_string(),
        }),
    }
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
