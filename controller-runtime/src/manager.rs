//! [`Manager`]: owns the client, the shared informers, the controllers and other runnables, and
//! runs them from cache sync to graceful shutdown.

use std::any::TypeId;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use informer::{InformerFactory, Object, Selectors, SharedIndexInformer};
use kube::core::NamespaceScope;
use kube::{Client, Resource};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::cache::{Cache, Shared};
use crate::error::Error;
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
}

impl std::fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("namespace", &self.namespace)
            .field("strip_managed_fields", &self.strip_managed_fields)
            .field("cache_sync_timeout", &self.cache_sync_timeout)
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
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

    /// The manager.
    pub fn build(self) -> Manager {
        let mut factory = InformerFactory::builder(self.client.clone())
            .selectors(self.default_selectors)
            .strip_managed_fields(self.strip_managed_fields);
        if let Some(resync) = self.resync {
            factory = factory.default_resync(resync);
        }
        Manager {
            shared: Arc::new(Shared {
                client: self.client,
                factory: factory.build(),
                namespace: self.namespace,
                selectors: self.selectors,
                cached: Mutex::new(HashSet::new()),
            }),
            cache_sync_timeout: self.cache_sync_timeout,
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            handle_signals: self.handle_signals,
            shutdown_token: self.shutdown_token,
            shutdown: ShutdownHandle::default(),
            state: Mutex::new(State::default()),
        }
    }
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
        }
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
    /// sync in time, if a runnable fails, if the graceful shutdown times out, or if a second
    /// shutdown request forced the exit.
    pub async fn start(&self) -> Result<(), Error> {
        let runnables = {
            let mut state = self.state.lock();
            if state.started {
                return Err(Error::AlreadyStarted);
            }
            state.started = true;
            std::mem::take(&mut state.runnables)
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
        let factory = &self.shared.factory;
        factory.start();
        tracing::info!(informers = factory.len(), "waiting for caches to sync");
        tokio::select! {
            synced = factory.wait_for_cache_sync(self.cache_sync_timeout) => {
                if let Err(error) = synced {
                    factory.shutdown().await;
                    return Err(Error::CacheSync(error));
                }
            }
            () = self.shutdown.graceful().cancelled() => {
                factory.shutdown().await;
                return Ok(());
            }
        }
        tracing::info!(
            runnables = runnables.len(),
            "caches synced; starting runnables"
        );

        let stop = CancellationToken::new();
        let mut tasks = JoinSet::new();
        for runnable in runnables {
            let token = stop.child_token();
            tasks.spawn(async move {
                let name = runnable.name().to_owned();
                let result = runnable.run(token).await;
                (name, result)
            });
        }
        let mut failure = None;
        loop {
            tokio::select! {
                () = self.shutdown.graceful().cancelled() => break,
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    if let Some(error) = runnable_error(joined) {
                        tracing::error!(%error, "runnable failed; shutting down");
                        failure = Some(error);
                        break;
                    }
                }
            }
        }

        stop.cancel();
        let drain = async {
            while let Some(joined) = tasks.join_next().await {
                if let Some(error) = runnable_error(joined) {
                    tracing::error!(%error, "runnable failed while shutting down");
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
        tasks.abort_all();
        if matches!(outcome, Err(Error::ForcedShutdown)) {
            // Exit at once: the informers stop in the background.
            let factory = factory.clone();
            tokio::spawn(async move { factory.shutdown().await });
        } else {
            factory.shutdown().await;
        }
        tracing::info!("manager stopped");
        match failure {
            Some(error) => Err(error),
            None => outcome,
        }
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
