//! The running controller: starts its external sources and debouncer (before leadership, when
//! it warms up), waits for its handlers to sync, then runs N workers that take keys from the
//! queue, skip those whose cache is older than the controller's own writes (staleness), reconcile
//! the others and act on the outcome (a requeued key keeps the priority it was handed out with,
//! unless the reconcile named another).

use std::any::Any;
use std::error::Error as StdError;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use indexer::ObjectKey;
use informer::{CacheSynced, InformerFactory, Registration, wait_for_cache_sync};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use workqueue::{AddOptions, Priority, PriorityWorkQueue};

use crate::controller::action::{Action, Requeue};
use crate::controller::context::Context;
use crate::controller::debounce::Debouncer;
use crate::controller::error::Error;
use crate::controller::intake::Intake;
use crate::controller::reconciler::{ReconcileError, Reconciler, Request};
use crate::controller::shard::{ShardGuard, Verdict};
use crate::controller::source::KeyStream;
use crate::controller::staleness::{Freshness, schedule_retry};
use crate::controller::state::ControllerState;
use crate::controller::stats::ControllerStats;
use crate::controller::warm_up::InformerStart;
use crate::ops::leader_election::LeaderElector;
use crate::ops::metrics::ControllerMetrics;
use crate::ops::runnable::Runnable;
use informer::Object;

/// Worker settings fixed at build time.
pub(crate) struct Settings {
    pub(crate) workers: usize,
    pub(crate) reconcile_timeout: Option<Duration>,
    pub(crate) sync_timeout: Duration,
    /// When the manager elects: the elector, checked before every reconcile.
    pub(crate) leadership: Option<LeaderElector>,
    pub(crate) need_leader_election: bool,
    /// In a sharded manager: asked before every reconcile.
    pub(crate) shard: Option<Box<dyn ShardGuard>>,
    /// Whether the controller starts its informers and sources before its manager leads.
    pub(crate) warm_up: bool,
}

/// A built controller, run by the manager.
pub(crate) struct ControllerRun<K: Object, R, Q> {
    pub(crate) state: Arc<ControllerState<K>>,
    /// The queue, driven through its trait: monomorphised for the queue the builder chose.
    pub(crate) queue: Q,
    /// Where watch events and sources hand in keys (through the debouncer, if any).
    pub(crate) intake: Intake,
    pub(crate) debouncer: Option<Arc<Debouncer>>,
    /// External sources and the priority of their keys; taken when the controller runs (a
    /// lock makes the shared run `Sync`: a stream need not be).
    pub(crate) sources: Mutex<Vec<KeyStream>>,
    pub(crate) reconciler: Arc<R>,
    pub(crate) registrations: Vec<(String, Registration)>,
    pub(crate) stats: Arc<ControllerStats>,
    pub(crate) settings: Settings,
    pub(crate) metrics: ControllerMetrics,
    /// The manager's informer factory and the start of each informer the controller watches,
    /// for a warm-up.
    pub(crate) factory: InformerFactory,
    pub(crate) starts: Vec<InformerStart>,
    /// The sources and the debouncer, once started (by the warm-up, or by `run`).
    pub(crate) background: Mutex<Option<JoinSet<()>>>,
}

/// How one reconcile ended.
enum Outcome {
    Finished(Result<Action, ReconcileError>),
    Panicked(Box<dyn Any + Send>),
    TimedOut(Duration),
}

#[async_trait]
impl<K, R, Q> Runnable for ControllerRun<K, R, Q>
where
    K: Object,
    R: Reconciler<K>,
    Q: PriorityWorkQueue<Item = ObjectKey>,
{
    fn name(&self) -> &str {
        &self.state.name
    }

    fn need_leader_election(&self) -> bool {
        self.settings.need_leader_election
    }

    fn warms_up(&self) -> bool {
        self.settings.warm_up
    }

    fn warm_up(&self, shutdown: &CancellationToken) {
        tracing::info!(controller = %self.state.name, informers = self.starts.len(), "warming up before leadership");
        for start in &self.starts {
            start.start(&self.factory);
        }
        let mut background = self.background.lock();
        if background.is_none() {
            *background = Some(self.start_background(shutdown));
        }
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        let this = Arc::new(*self);
        let name = Arc::clone(&this.state.name);
        // The sources and the debouncer run from now, or from the warm-up (their keys wait in
        // the queue until the workers start), until this returns, whichever way: dropping the
        // set aborts them.
        let warmed = this.background.lock().take();
        let _background = warmed.unwrap_or_else(|| this.start_background(&shutdown));
        let signals: Vec<&dyn CacheSynced> = this
            .registrations
            .iter()
            .map(|(_, registration)| registration as &dyn CacheSynced)
            .collect();
        tokio::select! {
            synced = tokio::time::timeout(this.settings.sync_timeout, wait_for_cache_sync(&signals)) => {
                if synced.is_err() {
                    let unsynced: Vec<&str> = this
                        .registrations
                        .iter()
                        .filter(|(_, registration)| !registration.has_synced())
                        .map(|(name, _)| name.as_str())
                        .collect();
                    this.queue.shut_down();
                    return Err(Box::new(Error::HandlersNotSynced {
                        controller: name.to_string(),
                        unsynced: unsynced.join(", "),
                        timeout: this.settings.sync_timeout,
                    }));
                }
            }
            () = shutdown.cancelled() => {
                this.queue.shut_down();
                return Ok(());
            }
        }
        drop(signals);
        tracing::info!(controller = %name, workers = this.settings.workers, "starting workers");
        let mut workers = JoinSet::new();
        for _ in 0..this.settings.workers {
            let (this, shutdown) = (Arc::clone(&this), shutdown.clone());
            workers.spawn(async move { this.work(shutdown).await });
        }
        shutdown.cancelled().await;
        // Stop intake; workers finish the reconcile they are in and exit.
        this.queue.shut_down();
        while let Some(joined) = workers.join_next().await {
            if let Err(error) = joined {
                tracing::error!(controller = %name, %error, "worker task failed");
            }
        }
        tracing::info!(controller = %name, "all workers stopped");
        Ok(())
    }
}

impl<K, R, Q> ControllerRun<K, R, Q>
where
    K: Object,
    R: Reconciler<K>,
    Q: PriorityWorkQueue<Item = ObjectKey>,
{
    /// Starts the external sources and the debouncer, until `shutdown` or until the returned
    /// set is dropped.
    fn start_background(&self, shutdown: &CancellationToken) -> JoinSet<()> {
        let sources = std::mem::take(&mut *self.sources.lock());
        let mut background = JoinSet::new();
        if let Some(debouncer) = self.debouncer.clone() {
            let shutdown = shutdown.clone();
            background.spawn(async move { debouncer.run(shutdown).await });
        }
        for source in sources {
            background.spawn(source.run(
                self.intake.clone(),
                Arc::clone(&self.stats),
                Arc::clone(&self.state.name),
                shutdown.clone(),
            ));
        }
        background
    }

    /// One worker: takes keys until shutdown.
    async fn work(&self, shutdown: CancellationToken) {
        loop {
            let key = tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                key = self.queue.get_with_priority() => key,
            };
            let Some((key, priority)) = key else { return };
            if let Some(elector) = &self.settings.leadership
                && !elector.is_leader()
            {
                // Past the renew deadline: never reconcile without the lease. The manager
                // aborts this controller as soon as the elector reports the loss.
                tracing::warn!(controller = %self.state.name, "not leading; worker stops");
                self.queue.done(&key);
                return;
            }
            self.process(&key, priority).await;
            self.queue.done(&key);
        }
    }

    /// Reconciles `key`, handed out with `priority`, once and acts on the outcome.
    async fn process(&self, key: &ObjectKey, priority: Priority) {
        let reconcile_id: Arc<str> = uuid::Uuid::new_v4().to_string().into();
        let span = tracing::info_span!(
            "reconcile",
            controller = %self.state.name,
            key = %key,
            reconcile_id = %reconcile_id,
        );
        async {
            let state = &self.state;
            if let Freshness::Stale {
                informer,
                written,
                cached,
            } = state.staleness.check(key)
            {
                // Not from a cache older than this controller's own writes: again once the
                // informer progresses, or after the key's short backoff.
                ControllerStats::count(&self.stats.stale_skips);
                let retry = state.staleness.park(key, priority);
                tracing::debug!(%informer, %written, %cached, ?retry, "cache older than this controller's own write; skipped");
                schedule_retry(&state.staleness, key.clone(), retry);
                return;
            }
            // The one lookup of the primary object for this reconcile, handed to the guard and
            // the context.
            let cached = state.primary.cached(key);
            let deleted = if cached.is_some() {
                None
            } else {
                state.deleted.lock().get(key).cloned()
            };
            if let Some(guard) = &self.settings.shard {
                let judged = guard.judge(
                    cached.as_ref().map(|object| object.meta()),
                    deleted.as_ref().map(|object| object.meta()),
                );
                match judged.await {
                    Verdict::Work => {}
                    Verdict::Skip => {
                        self.queue.forget(key);
                        self.settle_deleted(key, deleted.as_ref());
                        return;
                    }
                    Verdict::Retry => {
                        self.queue.add_with(
                            key.clone(),
                            AddOptions::new().priority(priority).rate_limited(),
                        );
                        return;
                    }
                }
            }
            let handed = deleted.clone();
            let ctx = Context::new(
                Arc::clone(state),
                key.clone(),
                reconcile_id,
                cached,
                deleted,
                priority,
            );
            self.stats.active_workers.fetch_add(1, Ordering::Relaxed);
            let started = tokio::time::Instant::now();
            let outcome = self.reconcile(key.clone(), ctx).await;
            self.metrics.reconciled(started.elapsed());
            self.stats.active_workers.fetch_sub(1, Ordering::Relaxed);
            self.act(key, priority, outcome, handed.as_ref());
        }
        .instrument(span)
        .await;
    }

    /// Runs the reconciler, containing panics and enforcing the timeout.
    async fn reconcile(&self, key: ObjectKey, ctx: Context<K>) -> Outcome {
        let reconciler = Arc::clone(&self.reconciler);
        let call = AssertUnwindSafe(async move {
            reconciler
                .reconcile(Request::new(key), ctx)
                .await
                .map_err(Into::into)
        })
        .catch_unwind();
        let result = match self.settings.reconcile_timeout {
            Some(limit) => match tokio::time::timeout(limit, call).await {
                Ok(result) => result,
                Err(_) => return Outcome::TimedOut(limit),
            },
            None => call.await,
        };
        match result {
            Ok(result) => Outcome::Finished(result),
            Err(payload) => Outcome::Panicked(payload),
        }
    }

    /// Requeues, forgets or backs off `key` according to `outcome`, counting it once; a
    /// requeue or retry keeps `priority`, the key's priority when it was handed out, unless the
    /// action names another. `handed` is the last state of a deleted object the reconcile was
    /// handed, if any.
    fn act(&self, key: &ObjectKey, priority: Priority, outcome: Outcome, handed: Option<&Arc<K>>) {
        let queue = &self.queue;
        let stats = &self.stats;
        match outcome {
            Outcome::Finished(Ok(action)) => {
                let priority = action.priority.unwrap_or(priority);
                self.requeue(key, priority, action, handed);
            }
            Outcome::Finished(Err(error)) if error.is_terminal() => {
                ControllerStats::count(&stats.terminal_errors);
                queue.forget(key);
                self.settle_deleted(key, handed);
                tracing::error!(%error, "reconcile failed with a terminal error; not retrying");
            }
            Outcome::Finished(Err(error)) => {
                ControllerStats::count(&stats.errors);
                tracing::warn!(%error, retries = queue.num_requeues(key), "reconcile failed; retrying with backoff");
                queue.add_with(
                    key.clone(),
                    AddOptions::new().priority(priority).rate_limited(),
                );
            }
            Outcome::Panicked(payload) => {
                ControllerStats::count(&stats.panics);
                ControllerStats::count(&stats.errors);
                tracing::error!(
                    panic = panic_message(payload.as_ref()),
                    "reconciler panicked; retrying with backoff"
                );
                queue.add_with(
                    key.clone(),
                    AddOptions::new().priority(priority).rate_limited(),
                );
            }
            Outcome::TimedOut(limit) => {
                ControllerStats::count(&stats.timeouts);
                ControllerStats::count(&stats.errors);
                tracing::warn!(timeout = ?limit, "reconcile timed out; retrying with backoff");
                queue.add_with(
                    key.clone(),
                    AddOptions::new().priority(priority).rate_limited(),
                );
            }
        }
    }

    /// Acts on a successful reconcile's `action`.
    fn requeue(
        &self,
        key: &ObjectKey,
        priority: Priority,
        action: Action,
        handed: Option<&Arc<K>>,
    ) {
        let (queue, stats) = (&self.queue, &self.stats);
        match action.requeue {
            Requeue::No => {
                ControllerStats::count(&stats.success);
                queue.forget(key);
                self.settle_deleted(key, handed);
                tracing::debug!("reconciled");
            }
            Requeue::Backoff => {
                ControllerStats::count(&stats.requeue);
                queue.add_with(
                    key.clone(),
                    AddOptions::new().priority(priority).rate_limited(),
                );
            }
            Requeue::After(delay) => {
                ControllerStats::count(&stats.requeue_after);
                queue.forget(key);
                queue.add_with(
                    key.clone(),
                    AddOptions::new().priority(priority).after(delay),
                );
            }
        }
    }

    /// After a final outcome, the deleted object's last state the reconcile was `handed` is no
    /// longer needed — unless it was replaced meanwhile (the object came back and went again:
    /// the next reconcile needs the new one). A re-created object's add already dropped it. No
    /// lookup of the cache: a reconcile that was handed nothing leaves the map alone, so a
    /// deletion seen while it ran reaches the next reconcile.
    fn settle_deleted(&self, key: &ObjectKey, handed: Option<&Arc<K>>) {
        let Some(handed) = handed else { return };
        let mut deleted = self.state.deleted.lock();
        if deleted
            .get(key)
            .is_some_and(|current| Arc::ptr_eq(current, handed))
        {
            deleted.remove(key);
        }
    }
}

/// The message of a panic payload, if it is a string.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)")
}
