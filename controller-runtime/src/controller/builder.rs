//! [`Controller`]: the builder that wires watches, predicates and a workqueue to a
//! [`Reconciler`], and registers the result with a [`Manager`].

use std::any::type_name;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use indexer::ObjectKey;
use informer::Object;
use parking_lot::Mutex;
use workqueue::{Priority, QueueConfig, RateLimiter, default_controller_rate_limiter};

use crate::controller::debounce::{Debounce, Debouncer};
use crate::controller::handle::ControllerHandle;
use crate::controller::handlers::{register_primary, register_secondary};
use crate::controller::intake::Intake;
use crate::controller::predicate::{AnyObject, EventFilter, Everything, Predicate, WatchFilter};
use crate::controller::queue::ControllerQueue;
use crate::controller::reconciler::Reconciler;
use crate::controller::registered::Registered;
use crate::controller::ryow::{DEFAULT_READ_YOUR_WRITES_TIMEOUT, WriteTracker};
use crate::controller::source::{Source, SourceItem};
use crate::controller::state::ControllerState;
use crate::controller::stats::ControllerStats;
use crate::controller::worker::{ControllerRun, Settings};
use crate::error::Error;
use crate::kind::Kind;
use crate::manager::cache::KindKey;
use crate::manager::controllers::Teardown;
use crate::manager::kind_cache::KindCache;
use crate::manager::runnable::Runnable;
use crate::manager::running::Manager;
use crate::owner::OwnerKind;
use crate::rbac::Rule;
use crate::recorder::{DEFAULT_EVENT_QUEUE, Recorder};

/// How many workers a controller runs unless told otherwise (controller-runtime's default).
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: usize = 1;

/// Entry point of the controller builder: `Controller::new(&manager).for_::<K>()`.
#[derive(Debug)]
pub struct Controller<'m> {
    manager: &'m Manager,
}

impl<'m> Controller<'m> {
    /// Starts building a controller that will run in `manager`.
    pub fn new(manager: &'m Manager) -> Self {
        Self { manager }
    }

    /// The primary type: every create, update and delete of a `K` enqueues a request for it.
    /// A controller has exactly one primary type (the builder cannot be given a second).
    pub fn for_<K: Kind>(self) -> ControllerBuilder<'m, K> {
        self.for_with::<K>(Everything)
    }

    /// [`for_`](Self::for_), enqueueing only the events of `K` that pass `predicate` (combine
    /// several with [`predicate::and`](crate::predicate::and)).
    pub fn for_with<K: Kind>(self, predicate: impl Predicate<K>) -> ControllerBuilder<'m, K> {
        self.for_any(
            OwnerKind::of::<K>(),
            (),
            Box::new(|manager: &Manager| {
                (manager.controller_kind_cache::<K>(), KindKey::of::<K>())
            }),
            Box::new(predicate),
        )
    }

    /// A builder for the primary kind described by `owner` and `dyntype`, whose cache
    /// `primary` gets.
    pub(super) fn for_any<K: Object>(
        self,
        owner: OwnerKind,
        dyntype: K::DynamicType,
        primary: PrimaryFn<K>,
        predicate: Box<dyn Predicate<K>>,
    ) -> ControllerBuilder<'m, K> {
        ControllerBuilder {
            manager: self.manager,
            name: owner.kind.to_lowercase(),
            owner,
            dyntype,
            primary,
            for_predicate: predicate,
            event_filters: Vec::new(),
            watches: Vec::new(),
            max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
            rate_limiter: None,
            reconcile_timeout: None,
            read_your_writes_timeout: DEFAULT_READ_YOUR_WRITES_TIMEOUT,
            need_leader_election: true,
            priority_queue: true,
            debounce: None,
            sources: Vec::new(),
            permissions: Vec::new(),
            event_recorder: true,
        }
    }
}

/// Registers one secondary watch: given the controller's intake of keys and its event filters,
/// adds a handler to the watched type's informer.
pub(super) type WatchFn =
    Box<dyn FnOnce(&Manager, &Intake, &Arc<[EventFilter]>) -> Result<Registered, Error>>;

/// Gets (or creates) the primary kind's cache, with its key.
pub(super) type PrimaryFn<K> = Box<dyn FnOnce(&Manager) -> (Arc<KindCache<K>>, KindKey)>;

/// Builds a controller for the primary type `K`; from [`Controller::for_`].
pub struct ControllerBuilder<'m, K: Object> {
    manager: &'m Manager,
    name: String,
    /// The primary kind, as owner references name it.
    pub(super) owner: OwnerKind,
    dyntype: K::DynamicType,
    primary: PrimaryFn<K>,
    for_predicate: Box<dyn Predicate<K>>,
    pub(super) event_filters: Vec<EventFilter>,
    pub(super) watches: Vec<(String, WatchFn)>,
    max_concurrent_reconciles: usize,
    rate_limiter: Option<Box<dyn RateLimiter<ObjectKey>>>,
    reconcile_timeout: Option<Duration>,
    read_your_writes_timeout: Duration,
    need_leader_election: bool,
    priority_queue: bool,
    /// Quiet time and maximum wait, as given (checked by `build`).
    debounce: Option<(Duration, Duration)>,
    sources: Vec<Source>,
    /// RBAC rules declared for the reconciler's own calls.
    permissions: Vec<Rule>,
    /// Whether the controller runs its event recorder.
    event_recorder: bool,
}

impl<K: Object> std::fmt::Debug for ControllerBuilder<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerBuilder")
            .field("name", &self.name)
            .field(
                "watches",
                &self
                    .watches
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .field("priority_queue", &self.priority_queue)
            .field("debounce", &self.debounce)
            .field("sources", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl<'m, K: Object> ControllerBuilder<'m, K> {
    /// The controller's name, unique per manager, used in logs and spans (default: the primary
    /// kind in lower case).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Filters the events of every watch (primary, owned and watched types) with `predicate`,
    /// before each watch's own predicate; several filters must all pass. The watches have
    /// different kinds, so `predicate` sees each object's metadata only ([`AnyObject`]): the
    /// built-in predicates, [`predicate::meta_fn`](crate::predicate::meta_fn) and
    /// combinations of them qualify.
    pub fn with_event_filter<P>(mut self, predicate: P) -> Self
    where
        P: for<'a> Predicate<AnyObject<'a>>,
    {
        self.event_filters.push(Arc::new(predicate));
        self
    }

    /// Watches `C` and enqueues the owner named by each `C`'s *controller* owner reference, if
    /// its kind and apiVersion group are `K`'s. Both the old and new owner of an update are
    /// enqueued.
    pub fn owns<C: Kind>(self) -> Self {
        self.owns_with::<C>(Everything)
    }

    /// [`owns`](Self::owns), enqueueing only for the events of `C` that pass `predicate`.
    pub fn owns_with<C: Kind>(self, predicate: impl Predicate<C>) -> Self {
        let owner = self.owner.clone();
        self.watches_with::<C, _, _>(move |child: &C| owner.owner_key(child.meta()), predicate)
    }

    /// Watches `W` and enqueues the requests `mapper` returns for each changed object (any
    /// number; for an update, those of the old and of the new object).
    pub fn watches<W, I, F>(self, mapper: F) -> Self
    where
        W: Kind,
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&W) -> I + Send + Sync + 'static,
    {
        self.watches_with::<W, I, F>(mapper, Everything)
    }

    /// [`watches`](Self::watches), mapping only the events of `W` that pass `predicate`.
    pub fn watches_with<W, I, F>(mut self, mapper: F, predicate: impl Predicate<W>) -> Self
    where
        W: Kind,
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&W) -> I + Send + Sync + 'static,
    {
        let own: Box<dyn Predicate<W>> = Box::new(predicate);
        let register: WatchFn = Box::new(move |manager, intake, event_filters| {
            let filter = Arc::new(WatchFilter::new(Arc::clone(event_filters), own));
            let mapper = Arc::new(mapper);
            let cache = manager.controller_kind_cache::<W>();
            Registered::on(KindKey::of::<W>(), &cache, |informer| {
                register_secondary(informer, intake, Arc::clone(&filter), Arc::clone(&mapper))
            })
        });
        self.watches.push((type_name::<W>().to_owned(), register));
        self
    }

    /// Adds a secondary watch, named `name` in logs, registered by `register` when the
    /// controller is built.
    pub(crate) fn add_watch(mut self, name: String, register: WatchFn) -> Self {
        self.watches.push((name, register));
        self
    }

    /// Reconciles the keys an external source yields: any [`Stream`] of [`ObjectKey`]s or
    /// [`Request`](crate::Request)s, or of `Result`s of them (a channel fed by a cloud API's
    /// webhook, a timer, a message bus), at [`Priority::NORMAL`].
    ///
    /// The keys take the way of watch events (the debouncer if any, the queue's dedup and rate
    /// limiting) but no predicate: there is no object to judge. The source is read from the
    /// controller's start (its keys wait in the queue until the caches synced) until shutdown.
    /// An error item is logged and counted
    /// ([`ControllerStats::source_errors`](crate::ControllerStats::source_errors)), and the
    /// source is read on; a source that ends is logged and counted
    /// ([`ControllerStats::sources_ended`](crate::ControllerStats::sources_ended)), and the
    /// controller runs on with its other sources and watches.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use kube_rt_controller_runtime::{Controller, Manager, ObjectKey};
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn wire(manager: &Manager) -> (Controller<'_>, tokio::sync::mpsc::Sender<ObjectKey>) {
    /// // Keys pushed by another task, say a cloud API's webhook receiver.
    /// let (pushed, received) = tokio::sync::mpsc::channel::<ObjectKey>(64);
    /// let from_channel = futures::stream::unfold(received, |mut received| async move {
    ///     received.recv().await.map(|key| (key, received))
    /// });
    /// // One key every five minutes.
    /// let every_five_minutes = futures::stream::unfold((), |()| async {
    ///     tokio::time::sleep(Duration::from_secs(300)).await;
    ///     Some((ObjectKey::namespaced("default", "inventory"), ()))
    /// });
    /// let _ = Controller::new(manager)
    ///     .for_::<ConfigMap>()
    ///     .watches_stream(from_channel)
    ///     .watches_stream(every_five_minutes);
    /// # (Controller::new(manager), pushed)
    /// # }
    /// ```
    pub fn watches_stream<S>(self, stream: S) -> Self
    where
        S: Stream + Send + 'static,
        S::Item: SourceItem,
    {
        self.watches_stream_with_priority(stream, Priority::NORMAL.get())
    }

    /// [`watches_stream`](Self::watches_stream), queueing the source's keys with `priority`
    /// (from [`Priority::MIN`] to [`Priority::MAX`]; checked by [`build`](Self::build)).
    pub fn watches_stream_with_priority<S>(mut self, stream: S, priority: i32) -> Self
    where
        S: Stream + Send + 'static,
        S::Item: SourceItem,
    {
        let name = format!("stream #{}", self.sources.len() + 1);
        self.sources.push(Source::new(name, stream, priority));
        self
    }

    /// Whether the controller's queue is the priority queue (the default, as in
    /// controller-runtime from v0.23): the adds of informers' initial lists and resyncs are
    /// queued at [`Priority::LOW`], every other event at [`Priority::NORMAL`], so a real change
    /// overtakes the backlog a restart or a resync leaves; a requeue or retry keeps its key's
    /// priority. `false` keeps the plain first-in, first-out rate-limiting queue, where every
    /// priority is ignored. See `workqueue::PriorityQueue` for how the two queues differ.
    pub fn priority_queue(mut self, enabled: bool) -> Self {
        self.priority_queue = enabled;
        self
    }

    /// Debounces the events of each key (off by default): a key is reconciled only once no new
    /// event came for it for `quiet`, with the highest priority among its events, but at most
    /// `max_wait` after the first of them, so that a constantly changing object is still
    /// reconciled. Applies to watch events and external sources, not to requeues after a
    /// reconcile nor to [`ControllerHandle::enqueue`]. `quiet` must be above zero and
    /// `max_wait` at least `quiet` (checked by [`build`](Self::build)).
    pub fn debounce(mut self, quiet: Duration, max_wait: Duration) -> Self {
        self.debounce = Some((quiet, max_wait));
        self
    }

    /// How many keys are reconciled at once (default 1; the same key never concurrently).
    pub fn max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.max_concurrent_reconciles = workers;
        self
    }

    /// The rate limiter of retries (default: workqueue's default controller limiter, per-item
    /// exponential 5 ms → 1000 s, max-of a 10 qps / burst 100 bucket).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<ObjectKey> + 'static) -> Self {
        self.rate_limiter = Some(Box::new(limiter));
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` and retries it with backoff
    /// (default: no timeout).
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// How long a reconcile waits for the cache to catch up with the controller's own last
    /// write to its key (default 5 s; see the crate docs on read-your-own-writes).
    pub fn read_your_writes_timeout(mut self, timeout: Duration) -> Self {
        self.read_your_writes_timeout = timeout;
        self
    }

    /// Whether the controller runs only while its manager leads, when the manager elects a
    /// leader (default: yes, as controller-runtime's `NeedLeaderElection`).
    pub fn need_leader_election(mut self, need: bool) -> Self {
        self.need_leader_election = need;
        self
    }

    /// Declares the RBAC rules the reconciler's own API calls need — its writes (creates,
    /// updates, status updates, patches, deletes) and any reads that bypass the cache — which
    /// the manager cannot infer from code. They join the manager's
    /// [`rbac_policy`](Manager::rbac_policy) when the controller is built, next to what the
    /// manager records itself (list and watch of every cached type, the event recorder,
    /// leader election). Repeatable.
    pub fn permissions(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.permissions.extend(rules);
        self
    }

    /// Whether the controller runs an event [`Recorder`] for [`Context::recorder`]
    /// (default: yes), which needs `events.k8s.io` events: create and patch. A controller
    /// that reports no events that way (or reports them through a recorder of its own) turns
    /// it off so its role does not grant them; what is still published to
    /// [`Context::recorder`] is then dropped and counted in [`Recorder::dropped`].
    ///
    /// [`Context::recorder`]: crate::Context::recorder
    pub fn event_recorder(mut self, enabled: bool) -> Self {
        self.event_recorder = enabled;
        self
    }

    /// Registers the watches and adds the controller to the manager; it runs from
    /// [`Manager::start`] — or, built while the manager runs, at once: the informers of kinds
    /// new to the manager start, and the workers start once the controller's handlers synced
    /// (see [`Manager::wait_for_kind`] for a kind installed late). Fails if the name is taken,
    /// a setting is invalid (no worker, a zero reconcile timeout, a zero debounce or a maximum
    /// wait below it, a source's priority out of range), or the manager has stopped.
    pub fn build<R: Reconciler<K>>(self, reconciler: R) -> Result<ControllerHandle, Error> {
        let invalid = |reason: String| Error::InvalidSetting {
            controller: self.name.clone(),
            reason,
        };
        if self.max_concurrent_reconciles == 0 {
            return Err(invalid(
                "max_concurrent_reconciles must be at least 1".to_owned(),
            ));
        }
        if self.reconcile_timeout == Some(Duration::ZERO) {
            return Err(invalid("reconcile_timeout must be positive".to_owned()));
        }
        let debounce = match self.debounce {
            Some((quiet, max_wait)) => Some(Debounce::new(quiet, max_wait).map_err(invalid)?),
            None => None,
        };
        let mut sources = Vec::with_capacity(self.sources.len());
        for source in self.sources {
            match Priority::new(source.priority) {
                Ok(priority) => sources.push((source, priority)),
                Err(error) => {
                    return Err(invalid(format!("external source {}: {error}", source.name)));
                }
            }
        }
        if let Some(rule) = self.permissions.iter().find(|r| r.verb_set().is_empty()) {
            return Err(invalid(format!(
                "the permission on {} has no verbs; add them with `.verbs([...])`",
                rule.resource_name()
            )));
        }
        let manager = self.manager;
        manager.reserve_name(&self.name)?;
        manager.require_all(self.permissions)?;
        let limiter: Box<dyn RateLimiter<ObjectKey>> = self
            .rate_limiter
            .unwrap_or_else(|| Box::new(default_controller_rate_limiter()));
        let mut queue_config = QueueConfig::new().name(self.name.clone());
        if let Some(provider) = manager.metrics().queue_provider(self.priority_queue) {
            queue_config = queue_config.metrics(provider);
        }
        let queue = ControllerQueue::new(limiter, queue_config, self.priority_queue);
        let debouncer = debounce.map(|debounce| Arc::new(Debouncer::new(debounce, queue.clone())));
        let intake = Intake::new(queue.clone(), debouncer.clone());

        let (recorder, recorder_task) =
            Recorder::new(manager.client().clone(), &self.name, DEFAULT_EVENT_QUEUE);
        let (primary, primary_key) = (self.primary)(manager);
        let state = Arc::new(ControllerState {
            name: self.name.clone().into(),
            client: manager.client().clone(),
            cache: manager.cache(),
            primary: Arc::clone(&primary),
            dyntype: self.dyntype,
            writes: WriteTracker::default(),
            deleted: Mutex::new(HashMap::new()),
            read_your_writes_timeout: self.read_your_writes_timeout,
            recorder,
        });
        let event_filters: Arc<[EventFilter]> = self.event_filters.into();
        let primary_filter = Arc::new(WatchFilter::new(
            Arc::clone(&event_filters),
            self.for_predicate,
        ));
        let mut watched = vec![Registered::on(primary_key, &primary, |informer| {
            register_primary(informer, &intake, &state, Arc::clone(&primary_filter))
        })?];
        for (_, register) in self.watches {
            watched.push(register(manager, &intake, &event_filters)?);
        }
        let mut teardown = Teardown {
            handlers: Vec::new(),
            kinds: Vec::new(),
        };
        let mut registrations = Vec::new();
        for registered in watched {
            registrations.extend(registered.registrations);
            teardown.handlers.extend(registered.removals);
            teardown.kinds.push(registered.kind);
        }

        let stats = Arc::new(ControllerStats::default());
        let run = ControllerRun {
            state,
            queue: queue.clone(),
            intake,
            debouncer,
            sources: Mutex::new(sources),
            reconciler: Arc::new(reconciler),
            registrations,
            stats: Arc::clone(&stats),
            settings: Settings {
                workers: self.max_concurrent_reconciles,
                reconcile_timeout: self.reconcile_timeout,
                sync_timeout: manager.cache_sync_timeout(),
                leadership: if self.need_leader_election {
                    manager.elector().cloned()
                } else {
                    None
                },
                need_leader_election: self.need_leader_election,
            },
            metrics: manager
                .metrics()
                .controller(&self.name, self.max_concurrent_reconciles),
        };
        let mut runnables: Vec<Box<dyn Runnable>> = vec![Box::new(run)];
        if self.event_recorder {
            runnables.insert(0, Box::new(recorder_task));
        }
        manager.add_controller(&self.name, runnables, teardown)?;
        Ok(ControllerHandle {
            name: self.name,
            stats,
            queue,
        })
    }
}
