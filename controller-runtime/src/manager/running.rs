//! [`Manager`]: owns the client, the shared informers, the controllers and other runnables, and
//! runs them from cache sync to graceful shutdown ([`start`](Manager::start); the runnables'
//! supervision is in `supervisor.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::Client;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::cache::{Cache, Registry};
use crate::manager::error::Error;
use crate::manager::shutdown::{ShutdownHandle, listen_for_signals};
use crate::manager::state::State;
use crate::ops::health::{Check, Probe, Probes};
use crate::ops::leader_election::{Error as LeaderElectionError, LeaderElector};
use crate::ops::metrics::Metrics;
use crate::ops::server::{Bound, start_servers};
use crate::sharding::{Shard, ShardedManager, SharderStats};

/// Owns the [`Cache`] (one informer factory, so every controller shares one cache and one
/// watch per kind), the controllers and other [`Runnable`](crate::manager::Runnable)s.
///
/// [`start`](Self::start) starts the informers, waits for their caches (failing with the names
/// of those that did not sync within the cache-sync timeout), runs every runnable, and returns
/// after a shutdown request — SIGINT/SIGTERM, the builder's cancellation token or a
/// [`ShutdownHandle`] — once in-flight reconciles drained (bounded by the graceful shutdown
/// timeout). A second request returns at once.
pub struct Manager {
    pub(crate) registry: Arc<Registry>,
    pub(super) cache_sync_timeout: Duration,
    pub(super) graceful_shutdown_timeout: Duration,
    pub(super) handle_signals: bool,
    pub(super) shutdown_token: Option<CancellationToken>,
    pub(super) shutdown: ShutdownHandle,
    pub(super) state: Mutex<State>,
    pub(super) metrics: Metrics,
    pub(super) elector: Option<Result<LeaderElector, LeaderElectionError>>,
    /// A sharded manager's shard and ring (see the `sharding` module's `sharded_manager.rs`).
    pub(super) sharded: Option<Arc<ShardedManager>>,
    /// Invalid sharding settings, reported by `start`.
    pub(super) sharding_error: Mutex<Option<crate::sharding::Error>>,
    pub(super) warm_up: bool,
    pub(super) synced: Arc<AtomicBool>,
    pub(super) probes: Arc<Probes>,
    pub(super) metrics_bind_address: Option<SocketAddr>,
    pub(super) health_probe_bind_address: Option<SocketAddr>,
    pub(super) bound: Mutex<Bound>,
    /// The webhook server, started with the probe servers (see `webhooks.rs`).
    #[cfg(feature = "webhook")]
    pub(crate) webhooks: Option<crate::webhook::WebhookServer>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("default_namespaces", &self.registry.default_namespaces())
            .field("informers", &self.registry.factory.len())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// This manager's metrics registry (one per manager).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// This replica's shard, when the manager is sharded
    /// ([`ManagerBuilder::sharding`](crate::manager::ManagerBuilder::sharding)).
    pub fn shard(&self) -> Option<&Shard> {
        self.sharded.as_deref().map(ShardedManager::shard)
    }

    /// The counts of the ring's sharder as this replica's candidate keeps them, when the
    /// manager is sharded (they grow only while this replica leads the sharder).
    pub fn sharder_stats(&self) -> Option<Arc<SharderStats>> {
        self.sharded.as_deref().map(ShardedManager::stats)
    }

    /// The sharded manager's part, if sharded.
    pub(crate) fn sharded(&self) -> Option<&ShardedManager> {
        self.sharded.as_deref()
    }

    /// The leader elector, if the manager elects (and its settings are valid). A sharded
    /// manager's is the one holding its shard Lease.
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

    /// Where the manager's servers listen, once [`start`](Self::start) bound them (each `None`
    /// until then, and for a server the manager does not run).
    pub fn addresses(&self) -> Addresses {
        let bound = self.bound.lock();
        Addresses {
            metrics: bound.metrics,
            health_probes: bound.probes,
            #[cfg(feature = "webhook")]
            webhook: self
                .webhooks
                .as_ref()
                .and_then(crate::webhook::WebhookServer::local_addr),
            #[cfg(not(feature = "webhook"))]
            webhook: None,
        }
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
        &self.registry.client
    }

    /// The caches: reads, field indexes, informers, kinds added late.
    pub fn cache(&self) -> Cache {
        Cache {
            registry: Arc::clone(&self.registry),
        }
    }

    /// A handle that requests this manager's shutdown.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// Runs the manager until a shutdown request (see [`Manager`]). Fails if a kind's cache
    /// settings contradict each other, if the caches do not sync in time, if a runnable fails, if the graceful shutdown times out, if a second
    /// shutdown request forced the exit, or — when electing — if leadership is lost
    /// ([`Error::LeadershipLost`]).
    ///
    /// Order: metrics and probe servers, the webhook server; the leader elector; the warm-up
    /// of controllers that warm up (their informers, sources and queues); informers and cache
    /// sync (after leadership is acquired, unless the manager warms up); runnables that do not
    /// need leadership; once leading, the others (controllers; a warm one at once, without
    /// waiting for the other informers).
    pub async fn start(&self) -> Result<(), Error> {
        if let Some(invalid) = self.registry.options.problems().into_iter().next() {
            return Err(Error::Cache(invalid));
        }
        if let Some(invalid) = self.sharding_error.lock().take() {
            return Err(Error::Sharding(invalid));
        }
        let (mut runnables, late) = {
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
        if let Some(sharded) = &self.sharded {
            runnables.extend(sharded.runnables(self.registry.client.clone(), &self.metrics)?);
        }
        let elector = match &self.elector {
            None => None,
            Some(Ok(elector)) => Some(elector.clone()),
            Some(Err(invalid)) => return Err(Error::LeaderElection(invalid.clone())),
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
        .await
        .map_err(|bind| Error::Bind {
            what: bind.what,
            address: bind.address,
            source: bind.source,
        })?;
        // Before the caches: listing a converted kind may need the conversion webhook. Every
        // replica serves, leader or not; it stops when `start` returns.
        #[cfg(feature = "webhook")]
        if let Some(webhooks) = &self.webhooks {
            self.serve_sharding_webhook()?;
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
        let factory = &self.registry.factory;
        if matches!(outcome, Err(Error::ForcedShutdown)) {
            // Exit at once: the informers stop in the background.
            let factory = factory.clone();
            tokio::spawn(async move { factory.shutdown().await });
        } else {
            factory.shutdown().await;
        }
        tracing::info!("manager stopped");
        match (outcome, self.shard()) {
            (Err(Error::LeadershipLost), Some(shard)) => Err(Error::ShardLeaseLost {
                ring: shard.ring().to_owned(),
                shard: shard.name().to_string(),
            }),
            (outcome, _) => outcome,
        }
    }
}

/// Where a manager's servers listen; from [`Manager::addresses`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Addresses {
    /// Where `/metrics` is served
    /// ([`metrics_bind_address`](crate::manager::ManagerBuilder::metrics_bind_address)).
    pub metrics: Option<SocketAddr>,
    /// Where `/healthz` and `/readyz` are served
    /// ([`health_probe_bind_address`](crate::manager::ManagerBuilder::health_probe_bind_address)).
    pub health_probes: Option<SocketAddr>,
    /// Where the webhook server listens
    /// ([`webhook_server`](crate::manager::ManagerBuilder::webhook_server)).
    pub webhook: Option<SocketAddr>,
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
