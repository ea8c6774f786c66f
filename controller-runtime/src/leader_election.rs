//! Leader election on `coordination.k8s.io/v1` Leases, following client-go's `leaderelection`
//! package: a [`LeaderElector`] campaigns for one lease, renews it while leading, and releases it
//! on graceful shutdown.
//!
//! # Protocol
//!
//! The lease spec holds client-go's `LeaderElectionRecord`: `holderIdentity`,
//! `leaseDurationSeconds`, `acquireTime`, `renewTime`, `leaseTransitions`. Every
//! [`retry_period`](LeaderElectionConfig::retry_period) a candidate reads the lease. Whenever the
//! record differs from the one it saw last, it notes its *own* monotonic clock (the
//! "observed time"); remote timestamps are never compared with local ones. It takes the lease
//! over only when the lease has no holder, or when `observed time + lease duration` has passed
//! without the record changing. Every write carries the `resourceVersion` that was read, so a
//! conflict (409) means another candidate wrote first and this attempt lost.
//!
//! # Safety: never two leaders at once
//!
//! The leader notes the instant *before* it sends each renewal. If no renewal succeeds by that
//! instant + [`renew_deadline`](LeaderElectionConfig::renew_deadline), it stops leading at once
//! (the deadline is a timer, not the outcome of a request that may hang), and the manager aborts
//! every runnable that needs leadership; [`LeaderElector::is_leader`] also turns false at the
//! deadline by itself, and controllers check it before every reconcile. A standby observed that
//! renewal no earlier than it was sent, and waits `lease duration` from its observation, so it
//! cannot take over before `renewal + lease duration` > `renewal + renew deadline`.
//!
//! This holds if the candidates' clocks *run at the same rate* (no assumption about their
//! absolute values, which are never compared): a leader clock slower than a standby's by more
//! than `(lease duration − renew deadline) / lease duration` (a third, with the defaults) breaks
//! it, as in client-go. Processes paused longer than that margin (a stopped VM) are the classic
//! way to break the assumption.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::metrics::{LeaderMetrics, Metrics};

/// Default lease duration (controller-runtime's): how long standbys wait, from the last change
/// they observed, before taking a lease over.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// Default renew deadline: how long the leader keeps trying to renew before it stops leading.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// Default retry period: how often candidates try to acquire and the leader renews.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// client-go's `JitterFactor`: the renew deadline must exceed this many retry periods.
const JITTER_FACTOR: f64 = 1.2;

type Callback = Arc<dyn Fn() + Send + Sync>;
type LeaderCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// Leader election settings; give them to
/// [`ManagerBuilder::leader_election`](crate::ManagerBuilder::leader_election).
#[derive(Clone)]
pub struct LeaderElectionConfig {
    namespace: String,
    name: String,
    identity: Option<String>,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    release_on_cancel: bool,
    on_started_leading: Option<Callback>,
    on_stopped_leading: Option<Callback>,
    on_new_leader: Option<LeaderCallback>,
}

impl std::fmt::Debug for LeaderElectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElectionConfig")
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("release_on_cancel", &self.release_on_cancel)
            .finish_non_exhaustive()
    }
}

impl LeaderElectionConfig {
    /// Elect on the Lease `name` in `namespace`, with the default timings (15 s / 10 s / 2 s)
    /// and identity (hostname + random suffix).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            identity: None,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            release_on_cancel: true,
            on_started_leading: None,
            on_stopped_leading: None,
            on_new_leader: None,
        }
    }

    /// This candidate's identity, written as `holderIdentity` (default: the hostname, `_`, and
    /// a random suffix). Must be unique among the candidates.
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// How long standbys wait after the last observed change before taking over (default 15 s).
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader keeps retrying a failing renewal before it stops leading
    /// (default 10 s). Must be shorter than the lease duration.
    pub fn renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// How often candidates try to acquire and the leader renews (default 2 s).
    pub fn retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// Whether a graceful shutdown releases the lease so a standby takes over at its next try
    /// (default: yes). Without release, standbys wait the lease duration.
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// Called when this candidate starts leading.
    pub fn on_started_leading(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_started_leading = Some(Arc::new(callback));
        self
    }

    /// Called when this candidate stops leading (lost the lease, or released it).
    pub fn on_stopped_leading(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stopped_leading = Some(Arc::new(callback));
        self
    }

    /// Called with the identity of every new leader observed (this candidate included).
    pub fn on_new_leader(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Arc::new(callback));
        self
    }

    /// The lease's namespace.
    pub fn lease_namespace(&self) -> &str {
        &self.namespace
    }

    /// The lease's name.
    pub fn lease_name(&self) -> &str {
        &self.name
    }

    /// Checks the timings as client-go does: renew deadline > 1.2 × retry period, lease
    /// duration > renew deadline, all positive; and a non-empty lease name. Fails with
    /// [`Error::LeaderElection`] naming the first rule broken.
    pub fn validate(&self) -> Result<(), Error> {
        if self.name.is_empty() || self.namespace.is_empty() {
            return Err(Error::LeaderElection(
                "the lease namespace and name must not be empty".to_owned(),
            ));
        }
        if self.retry_period.is_zero() {
            return Err(Error::LeaderElection(
                "retry period must be positive".to_owned(),
            ));
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(Error::LeaderElection(format!(
                "lease duration ({:?}) must be greater than renew deadline ({:?})",
                self.lease_duration, self.renew_deadline
            )));
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(Error::LeaderElection(format!(
                "renew deadline ({:?}) must be greater than {JITTER_FACTOR} × retry period ({:?})",
                self.renew_deadline, self.retry_period
            )));
        }
        if self.identity.as_deref() == Some("") {
            return Err(Error::LeaderElection(
                "identity must not be empty".to_owned(),
            ));
        }
        Ok(())
    }
}

/// The hostname and a random suffix, as controller-runtime builds its default identity.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let suffix: String = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
    format!("{host}_{suffix}")
}

/// What an elector knows about the lease.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderState {
    /// Whether this candidate leads.
    pub is_leader: bool,
    /// The holder of the lease as last observed (`None`: no holder, or not read yet).
    pub leader: Option<String>,
}

/// The leader-election record of a lease spec (client-go's `LeaderElectionRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Record {
    holder: String,
    lease_duration_seconds: i32,
    acquire_time: Option<MicroTime>,
    renew_time: Option<MicroTime>,
    transitions: i32,
}

impl Record {
    fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::default();
        };
        Self {
            holder: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.clone(),
            renew_time: spec.renew_time.clone(),
            transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.clone(),
            renew_time: self.renew_time.clone(),
            lease_transitions: Some(self.transitions),
            ..LeaseSpec::default()
        }
    }
}

/// Now, at the microsecond precision a Lease stores (so a record read back equals the one
/// written).
fn now_micro() -> MicroTime {
    use k8s_openapi::jiff::Timestamp;
    let now = Timestamp::now();
    MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
}

/// Mutable state shared by the elector task and its handles.
struct Inner {
    /// The record as last observed, the local instant it was observed, and the lease's
    /// resourceVersion then.
    observed: Option<(Record, Instant)>,
    /// While leading: the instant at which leadership ends unless renewed.
    deadline: Option<Instant>,
}

/// Campaigns for a lease and reports leadership; from [`Manager::elector`](crate::Manager::elector).
/// Cheap to clone.
#[derive(Clone)]
pub struct LeaderElector {
    shared: Arc<ElectorShared>,
}

struct ElectorShared {
    config: LeaderElectionConfig,
    identity: String,
    leases: Api<Lease>,
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
    ) -> Result<Self, String> {
        // The reason alone: `Manager::start` reports it as `Error::LeaderElection`.
        match config.validate() {
            Ok(()) => {}
            Err(Error::LeaderElection(reason)) => return Err(reason),
            Err(other) => return Err(other.to_string()),
        }
        let identity = config.identity.clone().unwrap_or_else(default_identity);
        let leases = Api::namespaced(client, &config.namespace);
        let metrics = metrics.leader(&config.name);
        Ok(Self {
            shared: Arc::new(ElectorShared {
                identity,
                leases,
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
        let lease = match shared.leases.get_opt(&config.name).await {
            Ok(lease) => lease,
            Err(error) => {
                tracing::warn!(%error, lease = %config.name, "cannot read the leader lease");
                return Attempt::Failed;
            }
        };
        let duration_seconds =
            i32::try_from(config.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let Some(lease) = lease else {
            let record = Record {
                holder: shared.identity.clone(),
                lease_duration_seconds: duration_seconds,
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                transitions: 0,
            };
            let new = Lease {
                metadata: ObjectMeta {
                    name: Some(config.name.clone()),
                    namespace: Some(config.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(record.to_spec()),
            };
            return match shared.leases.create(&PostParams::default(), &new).await {
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
        let old = Record::from_spec(lease.spec.as_ref());
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
        let mut update = lease;
        update.spec = Some(record.to_spec());
        match shared
            .leases
            .replace(&config.name, &PostParams::default(), &update)
            .await
        {
            Ok(_) => {
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
        let lease = match shared.leases.get_opt(&config.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "cannot read the leader lease to release it");
                return;
            }
        };
        let old = Record::from_spec(lease.spec.as_ref());
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
        let mut update = lease;
        update.spec = Some(record.to_spec());
        match shared
            .leases
            .replace(&config.name, &PostParams::default(), &update)
            .await
        {
            Ok(_) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate() {
        assert!(LeaderElectionConfig::new("ns", "lease").validate().is_ok());
    }

    #[test]
    fn renew_deadline_must_exceed_jittered_retry_period() {
        let config = LeaderElectionConfig::new("ns", "lease")
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_secs(2));
        assert!(config.validate().unwrap_err().to_string().contains("1.2"));
    }

    #[test]
    fn lease_duration_must_exceed_renew_deadline() {
        let config = LeaderElectionConfig::new("ns", "lease")
            .lease_duration(Duration::from_secs(10))
            .renew_deadline(Duration::from_secs(10));
        assert!(
            config
                .validate()
                .unwrap_err()
                .to_string()
                .contains("lease duration")
        );
    }

    #[test]
    fn default_identity_has_a_random_suffix() {
        let (a, b) = (default_identity(), default_identity());
        assert_ne!(a, b);
        assert!(a.contains('_'));
    }
}
