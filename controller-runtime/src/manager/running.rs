//! [`Manager`]: owns the client, the shared informers, the controllers and other runnables, and
//! runs them from cache sync to graceful shutdown ([`start`](Manager::start); the runnables'
//! supervision is in `supervisor.rs`).

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use informer::SharedIndexInformer;
use kube::Client;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::kind::Kind;
use crate::manager::cache::{Cache, Shared};
use crate::manager::controllers::ControllerSlot;
use crate::manager::runnable::Runnable;
use crate::manager::shutdown::{ShutdownHandle, listen_for_signals};
use crate::ops::health::{Check, Probe, Probes};
use crate::ops::leader_election::elector::LeaderElector;
use crate::ops::metrics::Metrics;
use crate::ops::server::{Bound, start_servers};

/// The runnables added before `start`, the controllers and their names, and where the
/// manager is in its life.
#[derive(Default)]
pub(super) struct State {
    pub(super) runnables: Vec<Box<dyn Runnable>>,
    pub(super) names: HashSet<String>,
    pub(super) controllers: HashMap<String, ControllerSlot>,
    pub(super) started: bool,
    /// While `start` runs: where runnables added meanwhile go (the supervisor starts them).
    pub(super) late: Option<mpsc::UnboundedSender<Box<dyn Runnable>>>,
    /// Once `start` returned: nothing can be added any more.
    pub(super) stopped: bool,
    /// The RBAC rules recorded and declared so far (see `rbac.rs`).
    pub(super) permissions: crate::rbac::Permissions,
}

/// Owns one [`InformerFactory`](informer::InformerFactory) (so every controller shares one cache and one watch per type),
/// the controllers and other [`Runnable`]s.
///
/// [`start`](Self::start) starts the informers, waits for their caches (failing with the names
/// of those that did not sync within the cache-sync timeout), runs every runnable, and returns
/// after a shutdown request — SIGINT/SIGTERM, the builder's cancellation token or a
/// [`ShutdownHandle`] — once in-flight reconciles drained (bounded by the graceful shutdown
/// timeout). A second request returns at once.
pub struct Manager {
    pub(crate) shared: Arc<Shared>,
    pub(super) cache_sync_timeout: Duration,
    pub(super) graceful_shutdown_timeout: Duration,
    pub(super) handle_signals: bool,
    pub(super) shutdown_token: Option<CancellationToken>,
    pub(super) shutdown: ShutdownHandle,
    pub(super) state: Mutex<State>,
    pub(super) metrics: Metrics,
    pub(super) elector: Option<Result<LeaderElector, String>>,
    pub(super) warm_up: bool,
    pub(super) synced: Arc<AtomicBool>,
    pub(super) probes: Arc<Probes>,
    pub(super) metrics_bind_address: Option<SocketAddr>,
    pub(super) health_probe_bind_address: Option<SocketAddr>,
    pub(super) bound: Mutex<Bound>,
    /// The webhook server, started with the probe servers (see `webhook/manager.rs`).
    #[cfg(feature = "webhook")]
    pub(crate) webhooks: Option<crate::webhook::WebhookServer>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field(
                "default_namespaces",
                &self.shared.options.default_namespaces,
            )
            .field("informers", &self.shared.factory.len())
            .finish_non_exhaustive()
    }
}

impl Manager {
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
        self.add_check(Probe::Healthz, name, Arc::new(check))
    }

    /// Adds a readiness check, run on every `/readyz` request; a failure answers 500 with the
    /// check's name and reason.
    pub fn add_readyz_check(
        &self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        self.add_check(Probe::Readyz, name, Arc::new(check))
    }

    /// Adds a user check (failing with 500) to `probe`.
    fn add_check(&self, probe: Probe, name: &str, check: Check) -> Result<(), Error> {
        self.probes
            .add(probe, name, check, false)
            .map_err(Error::DuplicateCheck)
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

    /// The manager's shared informer for `K` (scoped by the manager's namespaces and `K`'s
    /// options), for adding handlers, or to cache a type no controller watches. When `K` is
    /// cached in several namespaces this is the first namespace's informer; see
    /// [`informers`](Self::informers). Requested after `start`, it starts at once.
    pub fn informer<K: Kind>(&self) -> Arc<SharedIndexInformer<K>> {
        self.shared.informer::<K>()
    }

    /// `K`'s cache for a controller's watch, created on first request.
    pub(crate) fn controller_kind_cache<K: Kind>(
        &self,
    ) -> Arc<crate::manager::kind_cache::KindCache<K>> {
        self.shared.controller_kind_cache::<K>()
    }

    /// Every informer of the dynamic kind `kind`'s cache (created on first request, and kept):
    /// one per cached namespace, or a single one.
    pub fn dynamic_informers(
        &self,
        kind: &crate::DynamicKind,
    ) -> Vec<Arc<SharedIndexInformer<kube::api::DynamicObject>>> {
        self.shared.dynamic_kind_cache(kind).informers().to_vec()
    }

    /// Waits until the API server serves the dynamic kind `kind`, for at most `timeout`
    /// ([`Error::KindNotServed`] then); see [`wait_for_kind`](Self::wait_for_kind).
    pub async fn wait_for_dynamic_kind(
        &self,
        kind: &crate::DynamicKind,
        timeout: Duration,
    ) -> Result<(), Error> {
        let api: kube::Api<kube::api::DynamicObject> =
            kube::Api::all_with(self.client().clone(), kind.resource());
        crate::manager::controllers::wait_served(&api, kind.describe(), timeout).await
    }

    /// Every informer of `K`'s cache: one per cached namespace, or a single one.
    pub fn informers<K: Kind>(&self) -> Vec<Arc<SharedIndexInformer<K>>> {
        self.shared.kind_cache::<K>().informers().to_vec()
    }

    /// Registers the field index `name` on kind `K` (controller-runtime's
    /// `FieldIndexer.IndexField`): `extract` returns the values of the field for an object (any
    /// number). Query it with [`CacheLister::by_field`](crate::CacheLister::by_field) — from a
    /// reconciler's [`Context`](crate::Context), or from a `watches` mapper through a
    /// [`Cache`] — to find, say, every `Foo` whose `spec.configMapRef` names a ConfigMap.
    /// Registering caches `K` (as a watch of it would). Index values are kept per namespace,
    /// so a query can be limited to one. [`Error::FieldIndexExists`] if `name` is already
    /// registered on `K`.
    ///
    /// ```
    /// # use kube_rt_controller_runtime::{Error, Manager};
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # fn index(manager: &Manager) -> Result<(), Error> {
    /// manager.index_field::<Pod>("spec.nodeName", |pod| {
    ///     pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).into_iter().collect()
    /// })?;
    /// // Later, in a reconcile: every cached Pod on node-a.
    /// let on_node_a = manager.cache().lister::<Pod>()?.by_field("spec.nodeName", "node-a")?;
    /// # let _ = on_node_a;
    /// # Ok(())
    /// # }
    /// ```
    pub fn index_field<K: Kind>(
        &self,
        name: &str,
        extract: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        self.shared.kind_cache::<K>().add_field_index(name, extract)
    }

    /// A handle that requests this manager's shutdown.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    pub(crate) fn cache_sync_timeout(&self) -> Duration {
        self.cache_sync_timeout
    }

    /// Runs the manager until a shutdown request (see [`Manager`]). Fails if the caches do not
    /// sync in time, if a runnable fails, if the graceful shutdown times out, if a second
    /// shutdown request forced the exit, or — when electing — if leadership is lost
    /// ([`Error::LeadershipLost`]).
    ///
    /// Order: metrics and probe servers, the webhook server; the leader elector; informers and cache sync (after
    /// leadership is acquired, unless warming up); runnables that do not need leadership;
    /// once leading, the others (controllers).
    pub async fn start(&self) -> Result<(), Error> {
        let (runnables, late) = {
            let mut state = self.state.lock();
            if state.started {
                return Err(Error::AlreadyStarted);
            }
            state.started = true;
            let (sender, late) = mpsc::unbounded_channel();
            state.late = Some(sender);
            (std::mem::take(&mut state.runnables), late)
        };
        // Whichever way `start` returns, nothing can be added afterwards.
        let _stopped = MarkStopped(self);
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
        start_servers(
            self.metrics_bind_address,
            &self.metrics,
            self.health_probe_bind_address,
            &self.probes,
            &self.bound,
            &servers,
        )
        .await?;
        // Before the caches: listing a converted kind may need the conversion webhook. Every
        // replica serves, leader or not; it stops when `start` returns.
        #[cfg(feature = "webhook")]
        if let Some(webhooks) = &self.webhooks {
            webhooks.start(servers.clone()).await?;
        }

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
            .run_runnables(elector.as_ref(), leader_runnables, runnables, late, &lost)
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
}

/// Marks the manager stopped when dropped: runnables added later are refused.
struct MarkStopped<'a>(&'a Manager);

impl Drop for MarkStopped<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.stopped = true;
        state.late = None;
    }
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
