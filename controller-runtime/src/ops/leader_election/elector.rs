//! [`LeaderElector`]: campaigns for a lease, renews it while leading, stops leading at the renew
//! deadline by itself, and releases the lease on graceful shutdown (see the
//! [module docs](crate::leader_election) for the protocol and its safety argument).

use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::ops::leader_election::config::{JITTER_FACTOR, LeaderElectionConfig, default_identity};
use crate::ops::leader_election::error::Error;
use crate::ops::leader_election::record::{LeaseLock, Record, now_micro};
use crate::ops::metrics::{LeaderMetrics, Metrics};

/// What an elector knows about the lease.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderState {
    /// Whether this candidate leads.
    pub is_leader: bool,
    /// The holder of the lease as last observed (`None`: no holder, or not read yet).
    pub leader: Option<String>,
}

/// Mutable state shared by the elector task and its handles.
struct Inner {
    /// The record as last observed, the local instant it was observed, and the lease's
    /// resourceVersion then.
    observed: Option<(Record, Instant)>,
    /// While leading: the instant at which leadership ends unless renewed.
    deadline: Option<Instant>,
}

/// Campaigns for a lease and reports leadership; from [`Manager::elector`](crate::manager::Manager::elector).
/// Cheap to clone.
#[derive(Clone)]
pub struct LeaderElector {
    shared: Arc<ElectorShared>,
}

struct ElectorShared {
    config: LeaderElectionConfig,
    identity: String,
    lock: LeaseLock,
    inner: Mutex<Inner>,
    state: watch::Sender<LeaderState>,
    running: watch::Sender<bool>,
    metrics: LeaderMetrics,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("identity", &self.shared.identity)
            .field("lease", &self.shared.config.name)
            .field("state", &*self.shared.state.borrow())
            .finish_non_exhaustive()
    }
}

/// Why one acquire-or-renew attempt did not succeed.
enum Attempt {
    /// This candidate holds the lease (acquired or renewed).
    Held,
    /// Another candidate holds a valid lease.
    HeldByOther,
    /// The write conflicted or the request failed.
    Failed,
}

impl LeaderElector {
    /// An elector over `client` (validates `config`).
    pub(crate) fn new(
        client: Client,
        config: LeaderElectionConfig,
        metrics: &Metrics,
    ) -> Result<Self, Error> {
        config.validate()?;
        let identity = config.identity.clone().unwrap_or_else(default_identity);
        let lock = LeaseLock::new(
            client,
            &config.namespace,
            &config.name,
            config.lease_labels.clone(),
        );
        let metrics = metrics.leader(&config.name);
        Ok(Self {
            shared: Arc::new(ElectorShared {
                identity,
                lock,
                config,
                inner: Mutex::new(Inner {
                    observed: None,
                    deadline: None,
                }),
                state: watch::Sender::new(LeaderState::default()),
                running: watch::Sender::new(false),
                metrics,
            }),
        })
    }

    /// This candidate's identity (`holderIdentity` while it leads).
    pub fn identity(&self) -> &str {
        &self.shared.identity
    }

    /// The settings.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.shared.config
    }

    /// Whether this candidate leads *now*: turns false at the renew deadline by itself, even
    /// before the elector task notices.
    pub fn is_leader(&self) -> bool {
        self.shared
            .inner
            .lock()
            .deadline
            .is_some_and(|deadline| Instant::now() < deadline)
    }

    /// The lease holder as last observed (`None` if there is none or the lease was not read).
    pub fn leader(&self) -> Option<String> {
        self.shared.state.borrow().leader.clone()
    }

    /// The leadership state, updated on every change.
    pub fn subscribe(&self) -> watch::Receiver<LeaderState> {
        self.shared.state.subscribe()
    }

    /// Whether the elector task is running (a readiness condition).
    pub fn is_running(&self) -> bool {
        *self.shared.running.borrow()
    }

    /// Waits until this candidate leads. Returns `false` if `stop` fired first.
    pub(crate) async fn wait_leading(&self, stop: &CancellationToken) -> bool {
        let mut state = self.subscribe();
        tokio::select! {
            leading = state.wait_for(|state| state.is_leader) => leading.is_ok(),
            () = stop.cancelled() => false,
        }
    }

    /// Campaigns and leads until `shutdown` fires (then releases the lease if configured) or
    /// leadership is lost. Returns whether leadership was lost (`true`) rather than given up.
    pub(crate) async fn run(&self, shutdown: CancellationToken) -> bool {
        let shared = &self.shared;
        shared.running.send_replace(true);
        let _running = RunningGuard(self.clone());
        tracing::info!(identity = %shared.identity, lease = %shared.config.name, "attempting to acquire leader lease");
        // Acquire.
        loop {
            let started = Instant::now();
            if let Attempt::Held = self.try_acquire_or_renew(started).await {
                break;
            }
            let wait = jittered(shared.config.retry_period);
            tokio::select! {
                () = shutdown.cancelled() => return false,
                () = tokio::time::sleep(wait) => {}
            }
        }
        tracing::info!(identity = %shared.identity, lease = %shared.config.name, "successfully acquired lease");
        self.set_leading(true);
        // Renew every retry period; stop leading at the deadline of the last renewal.
        loop {
            let deadline = shared.inner.lock().deadline.unwrap_or_else(Instant::now);
            tokio::select! {
                () = shutdown.cancelled() => {
                    self.set_leading(false);
                    if shared.config.release_on_cancel {
                        self.release().await;
                    }
                    return false;
                }
                () = tokio::time::sleep_until(deadline) => {
                    tracing::error!(identity = %shared.identity, lease = %shared.config.name, "failed to renew the lease before the renew deadline; stopped leading");
                    self.set_leading(false);
                    return true;
                }
                () = self.renew_round() => {}
            }
        }
    }

    /// Waits one retry period, then tries to renew until one attempt succeeds (every retry
    /// period). Cancelled from `run` at the deadline.
    async fn renew_round(&self) {
        let period = self.shared.config.retry_period;
        tokio::time::sleep(period).await;
        loop {
            let started = Instant::now();
            if let Attempt::Held = self.try_acquire_or_renew(started).await {
                return;
            }
            self.shared.metrics.slowpath();
            tokio::time::sleep(period).await;
        }
    }

    /// client-go's `tryAcquireOrRenew`: one read and at most one write. `started` is the
    /// instant before the request, from which a successful write's deadline is counted.
    async fn try_acquire_or_renew(&self, started: Instant) -> Attempt {
        let shared = &self.shared;
        let config = &shared.config;
        let now = now_micro();
        let lease = match shared.lock.get().await {
            Ok(lease) => lease,
            Err(error) => {
                tracing::warn!(%error, lease = %config.name, "cannot read the leader lease");
                return Attempt::Failed;
            }
        };
        let duration_seconds =
            i32::try_from(config.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let Some((old, lease)) = lease else {
            let record = Record {
                holder: shared.identity.clone(),
                lease_duration_seconds: duration_seconds,
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                transitions: 0,
            };
            return match shared.lock.create(&record).await {
                Ok(_) => {
                    self.observe(record, started, Some(started + config.renew_deadline));
                    Attempt::Held
                }
                Err(error) => {
                    tracing::debug!(%error, "cannot create the leader lease");
                    Attempt::Failed
                }
            };
        };
        let observed_at = {
            let mut inner = shared.inner.lock();
            match &inner.observed {
                Some((record, at)) if *record == old => *at,
                _ => {
                    let at = Instant::now();
                    inner.observed = Some((old.clone(), at));
                    at
                }
            }
        };
        self.publish_leader(&old.holder);
        let leading = self.is_leader();
        if !old.holder.is_empty()
            && old.holder != shared.identity
            && Instant::now() < observed_at + config.lease_duration
        {
            return Attempt::HeldByOther;
        }
        let mut record = Record {
            holder: shared.identity.clone(),
            lease_duration_seconds: duration_seconds,
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            transitions: old.transitions,
        };
        if old.holder == shared.identity && leading {
            record.acquire_time = old.acquire_time.clone();
        } else {
            record.transitions = old.transitions.saturating_add(1);
        }
        match shared.lock.update(lease, &record).await {
            Ok(()) => {
                self.observe(record, started, Some(started + config.renew_deadline));
                Attempt::Held
            }
            Err(error) => {
                tracing::debug!(%error, lease = %config.name, "cannot write the leader lease");
                Attempt::Failed
            }
        }
    }

    /// Records a successful write: the record, when it was observed, and the new deadline.
    fn observe(&self, record: Record, at: Instant, deadline: Option<Instant>) {
        let holder = record.holder.clone();
        {
            let mut inner = self.shared.inner.lock();
            inner.observed = Some((record, at));
            // Extend only while leading or acquiring (`set_leading(false)` clears it).
            inner.deadline = deadline;
        }
        self.publish_leader(&holder);
    }

    /// Publishes the observed holder, calling `on_new_leader` on a change.
    fn publish_leader(&self, holder: &str) {
        let holder = (!holder.is_empty()).then(|| holder.to_owned());
        let mut changed = false;
        self.shared.state.send_if_modified(|state| {
            if state.leader != holder {
                state.leader = holder.clone();
                changed = true;
            }
            changed
        });
        if changed && let Some(holder) = &holder {
            tracing::info!(leader = %holder, lease = %self.shared.config.name, "new leader observed");
            if let Some(callback) = &self.shared.config.on_new_leader {
                callback(holder);
            }
        }
    }

    /// Updates the leading flag, the metric, the watch channel and calls the callbacks.
    fn set_leading(&self, leading: bool) {
        let shared = &self.shared;
        if !leading {
            shared.inner.lock().deadline = None;
        }
        shared.metrics.leading(leading);
        let changed = shared.state.send_if_modified(|state| {
            let changed = state.is_leader != leading;
            state.is_leader = leading;
            changed
        });
        if !changed {
            return;
        }
        let callback = if leading {
            &shared.config.on_started_leading
        } else {
            &shared.config.on_stopped_leading
        };
        if let Some(callback) = callback {
            callback();
        }
    }

    /// Gives the lease up (client-go's release: no holder, a 1 s duration), if this candidate
    /// still holds it as last observed; a conflict means someone else holds it now.
    async fn release(&self) {
        let shared = &self.shared;
        let config = &shared.config;
        let (old, lease) = match shared.lock.get().await {
            Ok(Some(lease)) => lease,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "cannot read the leader lease to release it");
                return;
            }
        };
        if old.holder != shared.identity {
            return;
        }
        let now = now_micro();
        let record = Record {
            holder: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            transitions: old.transitions,
        };
        match shared.lock.update(lease, &record).await {
            Ok(()) => {
                tracing::info!(identity = %shared.identity, lease = %config.name, "released the leader lease");
                self.publish_leader("");
            }
            Err(error) => tracing::warn!(%error, "cannot release the leader lease"),
        }
    }
}

/// Marks the elector as not running when its task ends or is dropped.
struct RunningGuard(LeaderElector);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.0.shared.running.send_replace(false);
        self.0.shared.inner.lock().deadline = None;
        self.0.shared.metrics.leading(false);
    }
}

/// `period` plus up to 20 % (client-go jitters the acquire retry by 1.2 × period).
fn jittered(period: Duration) -> Duration {
    period + period.mul_f64(fastrand::f64() * (JITTER_FACTOR - 1.0))
}
