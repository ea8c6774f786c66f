//! [`Controller`]: the builder that wires watches, predicates and a workqueue to a
//! [`Reconciler`](crate::controller::Reconciler); [`ControllerBuilder::build`] (in `build.rs`)
//! registers the result with a [`Manager`](crate::manager::Manager).

use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use informer::Object;
use kube::core::ObjectMeta;
use workqueue::RateLimiter;

use crate::controller::error::Error;
use crate::controller::handlers::{Mapper, SecondaryHandler};
use crate::controller::host::Host;
use crate::controller::intake::Intake;
use crate::controller::predicate::{AnyObject, EventFilter, Predicate, WatchFilter};
use crate::controller::registered::Registered;
use crate::controller::shard::ShardRole;
use crate::controller::shard_kinds::{register_kind, shard_kind};
use crate::controller::source::KeyStream;
use crate::controller::staleness::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
use crate::controller::watch::Watch;
use crate::rbac::{Rule, Verb};

/// How many workers a controller runs unless told otherwise (controller-runtime's default).
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: usize = 1;

/// Entry point of the controller builder: `Controller::new(&manager).for_(Watch::of::<K>())`.
///
/// A controller has exactly one primary kind; a second `for_` does not compile:
///
/// ```compile_fail
/// # use controller_runtime::prelude::*;
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # fn f(manager: &Manager) {
/// Controller::new(manager).for_(Watch::of::<ConfigMap>()).for_(Watch::of::<Secret>());
/// # }
/// ```
///
/// [`Controller::new`] takes the [`Manager`](crate::manager::Manager) the controller will run in.
pub struct Controller<'m> {
    manager: &'m dyn Host,
}

impl std::fmt::Debug for Controller<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller").finish_non_exhaustive()
    }
}

impl<'m> Controller<'m> {
    /// Starts building a controller that will run in `host` (the manager's side of
    /// [`Controller::new`]).
    pub(crate) fn on(host: &'m dyn Host) -> Self {
        Self { manager: host }
    }

    /// The primary kind: every create, update and delete of a watched object that passes the
    /// watch's predicates enqueues a request for it. A controller has exactly one primary kind
    /// (the builder cannot be given a second), typed, metadata-only or dynamic; the reconciler
    /// is a `Reconciler<T>` of the watch's object type.
    pub fn for_<T: Object>(self, watch: Watch<T>) -> ControllerBuilder<'m, T> {
        ControllerBuilder {
            manager: self.manager,
            name: watch.spec.owner.kind.to_lowercase(),
            primary: watch,
            event_filters: Vec::new(),
            watches: Vec::new(),
            sources: Vec::new(),
            settings: BuilderSettings::default(),
        }
    }
}

/// Registers one secondary watch: given the manager, the controller's name, its intake of keys
/// and its event filters, adds a handler to each informer of the watched kind's cache.
pub(super) type WatchFn =
    Box<dyn FnOnce(&dyn Host, &str, &Intake, &Arc<[EventFilter]>) -> Result<Registered, Error>>;

/// Builds a controller for the primary object type `K`; from [`Controller::for_`].
pub struct ControllerBuilder<'m, K: Object> {
    pub(super) manager: &'m dyn Host,
    pub(super) name: String,
    pub(super) primary: Watch<K>,
    pub(super) event_filters: Vec<EventFilter>,
    pub(super) watches: Vec<(String, WatchFn)>,
    pub(super) sources: Vec<KeyStream>,
    pub(super) settings: BuilderSettings,
}

/// The builder's settings of the controller's queue and workers.
pub(super) struct BuilderSettings {
    pub(super) max_concurrent_reconciles: usize,
    pub(super) rate_limiter: Option<Box<dyn RateLimiter<ObjectKey>>>,
    pub(super) reconcile_timeout: Option<Duration>,
    pub(super) read_your_writes_timeout: Duration,
    pub(super) need_leader_election: bool,
    /// Whether to warm up before leadership; `None`: the manager's default.
    pub(super) warm_up: Option<bool>,
    pub(super) priority_queue: bool,
    /// Quiet time and maximum wait, as given (checked by `build`).
    pub(super) debounce: Option<(Duration, Duration)>,
    /// RBAC rules declared for the reconciler's own calls.
    pub(super) permissions: Vec<Rule>,
    /// Whether the controller runs its event recorder.
    pub(super) event_recorder: bool,
}

impl Default for BuilderSettings {
    fn default() -> Self {
        Self {
            max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
            rate_limiter: None,
            reconcile_timeout: None,
            read_your_writes_timeout: DEFAULT_READ_YOUR_WRITES_TIMEOUT,
            need_leader_election: true,
            warm_up: None,
            priority_queue: true,
            debounce: None,
            permissions: Vec::new(),
            event_recorder: true,
        }
    }
}

impl<K: Object> std::fmt::Debug for ControllerBuilder<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let watches: Vec<&String> = self.watches.iter().map(|(name, _)| name).collect();
        f.debug_struct("ControllerBuilder")
            .field("name", &self.name)
            .field("primary", &self.primary)
            .field("watches", &watches)
            .field("sources", &self.sources)
            .field(
                "max_concurrent_reconciles",
                &self.settings.max_concurrent_reconciles,
            )
            .field("priority_queue", &self.settings.priority_queue)
            .field("debounce", &self.settings.debounce)
            .finish_non_exhaustive()
    }
}

impl<K: Object> ControllerBuilder<'_, K> {
    /// Watches `watch`'s kind and enqueues the owner named by each object's *controller* owner
    /// reference, if its kind and apiVersion group are the primary kind's (both the old and the
    /// new owner of an update). Typed, metadata-only and dynamic kinds alike.
    ///
    /// Owning implies that the reconciler marks owned objects with
    /// [`set_controller_reference`](crate::util::set_controller_reference), which sets
    /// `blockOwnerDeletion`; clusters that enforce owner-reference permissions
    /// (`OwnerReferencesPermissionEnforcement`, on in OpenShift and many hardened clusters) then
    /// require `update` on the owner's `finalizers` subresource, so that rule joins the
    /// manager's [`rbac_policy`](crate::manager::Manager::rbac_policy).
    pub fn owns<C: Object>(mut self, watch: Watch<C>) -> Self {
        let finalizers = self
            .primary
            .spec
            .resource
            .clone()
            .subresource("finalizers")
            .verbs([Verb::Update]);
        if !self.settings.permissions.contains(&finalizers) {
            self.settings.permissions.push(finalizers);
        }
        let owner = self.primary.spec.owner.clone();
        let mapper = Mapper::Meta(Arc::new(move |child: &ObjectMeta| owner.owner_key(child)));
        self.watch_kind(watch, mapper, Some(ShardRole::Owned))
    }

    /// Watches `watch`'s kind and enqueues the requests `mapper` returns for each changed
    /// object that passes the watch's predicates (any number; for an update, those of the old
    /// and of the new object).
    pub fn watches<W, I, F>(self, watch: Watch<W>, mapper: F) -> Self
    where
        W: Object,
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&W) -> I + Send + Sync + 'static,
    {
        let mapper = Mapper::Object(Arc::new(move |obj: &W| mapper(obj).into_iter().collect()));
        self.watch_kind(watch, mapper, None)
    }

    /// Adds a secondary watch; in a sharded manager, its kind is sharded in `sharded` (owned
    /// kinds follow their owner), or cached whole with `None`.
    fn watch_kind<W: Object>(
        mut self,
        watch: Watch<W>,
        mapper: Mapper<W>,
        sharded: Option<ShardRole>,
    ) -> Self {
        let (spec, predicate, name) = watch.into_parts();
        let register: WatchFn = Box::new(move |manager, controller, intake, event_filters| {
            let filter = Arc::new(WatchFilter::new(Arc::clone(event_filters), predicate));
            let kind = match sharded {
                Some(role) => shard_kind(manager, &spec, controller, role)?,
                None => None,
            };
            let cache = manager.cache().registry.controller_kind_cache(&spec)?;
            register_kind(manager, kind, &cache);
            let handler = SecondaryHandler {
                intake,
                filter: &filter,
                mapper: &mapper,
            };
            Registered::on_cache(spec.key.clone(), &cache, &handler)
        });
        self.watches.push((name, register));
        self
    }

    /// Reconciles the keys an external source yields: a [`KeyStream`], or any
    /// [`Stream`](futures::Stream) of [`ObjectKey`]s or
    /// [`Request`](crate::controller::Request)s, or of `Result`s of them (a channel fed by a
    /// cloud API's webhook, a timer, a message bus), at the stream's priority.
    ///
    /// The keys take the way of watch events (the debouncer if any, the queue's dedup and rate
    /// limiting) but no predicate: there is no object to judge. The source is read from the
    /// controller's start (its keys wait in the queue until the caches synced) until shutdown.
    /// An error item is logged and counted
    /// ([`ControllerStats::source_errors`](crate::controller::ControllerStats::source_errors)),
    /// and the source is read on; a source that ends is logged and counted
    /// ([`ControllerStats::sources_ended`](crate::controller::ControllerStats::sources_ended)),
    /// and the controller runs on with its other sources and watches.
    ///
    /// ```
    /// # use controller_runtime::controller::{Controller, Watch};
    /// # use controller_runtime::manager::Manager;
    /// # use controller_runtime::ObjectKey;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn wire(manager: &Manager) -> tokio::sync::mpsc::Sender<ObjectKey> {
    /// // Keys pushed by another task, say a cloud API's webhook receiver.
    /// let (pushed, received) = tokio::sync::mpsc::channel::<ObjectKey>(64);
    /// let from_channel = futures::stream::unfold(received, |mut received| async move {
    ///     received.recv().await.map(|key| (key, received))
    /// });
    /// let _ = Controller::new(manager)
    ///     .for_(Watch::of::<ConfigMap>())
    ///     .watches_stream(from_channel);
    /// # pushed
    /// # }
    /// ```
    pub fn watches_stream(mut self, source: impl Into<KeyStream>) -> Self {
        let mut source = source.into();
        let number = self.sources.len() + 1;
        source.name_or(|| format!("stream #{number}"));
        self.sources.push(source);
        self
    }

    /// The controller's name, unique per manager, used in logs and spans (default: the primary
    /// kind in lower case).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Filters the events of every watch (primary, owned and watched kinds) with `predicate`,
    /// before each watch's own predicates; several filters must all pass. The watches have
    /// different kinds, so `predicate` sees each object's metadata only ([`AnyObject`]): the
    /// built-in predicates, [`predicate::meta_fn`](crate::controller::predicate::meta_fn) and
    /// combinations of them qualify.
    pub fn with_event_filter<P>(mut self, predicate: P) -> Self
    where
        P: for<'a> Predicate<AnyObject<'a>>,
    {
        self.event_filters.push(Arc::new(predicate));
        self
    }

    /// Whether the controller's queue is the priority queue (the default, as in
    /// controller-runtime from v0.23): the adds of informers' initial lists and resyncs are
    /// queued at [`Priority::LOW`](crate::controller::Priority::LOW), every other event at
    /// [`Priority::NORMAL`](crate::controller::Priority::NORMAL), so a real change overtakes
    /// the backlog a restart or a resync leaves; a requeue or retry keeps its key's priority.
    /// `false` keeps the plain first-in, first-out rate-limiting queue, where every priority is
    /// ignored.
    pub fn priority_queue(mut self, enabled: bool) -> Self {
        self.settings.priority_queue = enabled;
        self
    }

    /// Debounces the events of each key (off by default): a key is reconciled only once no new
    /// event came for it for `quiet`, with the highest priority among its events, but at most
    /// `max_wait` after the first of them, so that a constantly changing object is still
    /// reconciled. Applies to watch events and external sources, not to requeues after a
    /// reconcile nor to [`ControllerHandle::enqueue`](crate::controller::ControllerHandle::enqueue).
    /// `quiet` must be above zero and `max_wait` at least `quiet` (checked by
    /// [`build`](Self::build)).
    pub fn debounce(mut self, quiet: Duration, max_wait: Duration) -> Self {
        self.settings.debounce = Some((quiet, max_wait));
        self
    }

    /// How many keys are reconciled at once (default 1; the same key never concurrently).
    pub fn max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.settings.max_concurrent_reconciles = workers;
        self
    }

    /// The rate limiter of retries (default: workqueue's default controller limiter, per-item
    /// exponential 5 ms → 1000 s, max-of a 10 qps / burst 100 bucket).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<ObjectKey> + 'static) -> Self {
        self.settings.rate_limiter = Some(Box::new(limiter));
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` and retries it with backoff
    /// (default: no timeout).
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.settings.reconcile_timeout = Some(timeout);
        self
    }

    /// How long a key's reconciles are skipped at most while a cache has not caught up with
    /// the controller's own writes of its earlier reconciles (default 5 s; see the module docs
    /// on staleness); then it is reconciled anyway, with a warning. (Before staleness
    /// mitigation, the bound on a reconcile's wait for its primary object.)
    pub fn read_your_writes_timeout(mut self, timeout: Duration) -> Self {
        self.settings.read_your_writes_timeout = timeout;
        self
    }

    /// Whether the controller runs only while its manager leads, when the manager elects a
    /// leader (default: yes, as controller-runtime's `NeedLeaderElection`).
    pub fn need_leader_election(mut self, need: bool) -> Self {
        self.settings.need_leader_election = need;
        self
    }

    /// Whether the controller warms up before its manager leads (controller-runtime's
    /// `EnableWarmup`; default: the manager's
    /// [`warm_up_before_leadership`](crate::manager::ManagerBuilder::warm_up_before_leadership),
    /// off unless set). A warm controller on a replica that does not lead starts the informers of
    /// the kinds it watches, its external sources and its debouncer at once; its queue fills
    /// from their events, and only its workers wait: a replica that takes over reconciles at once,
    /// from synced caches, without listing anything. A cold one starts all of that once its
    /// manager leads. Informers are shared: a kind watched by a warm controller is warm for every
    /// controller that watches it. Without leader election (or with
    /// [`need_leader_election(false)`](Self::need_leader_election)) it changes nothing.
    pub fn warm_up(mut self, warm_up: bool) -> Self {
        self.settings.warm_up = Some(warm_up);
        self
    }

    /// Declares the RBAC rules the reconciler's own API calls need — its writes (creates,
    /// updates, status updates, patches, deletes) and any reads that bypass the cache — which
    /// the manager cannot infer from code. They join the manager's
    /// [`rbac_policy`](crate::manager::Manager::rbac_policy) when the controller is built, next to what the
    /// manager records itself (list and watch of every cached kind, the event recorder, leader
    /// election, the owner's finalizers for owned kinds). Repeatable.
    pub fn permissions(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.settings.permissions.extend(rules);
        self
    }

    /// Whether the controller runs an event [`Recorder`](crate::events::Recorder) for
    /// [`Context::recorder`](crate::controller::Context::recorder) (default: yes), which needs
    /// `events.k8s.io` events: create and patch. A controller that reports no events that way
    /// (or reports them through a recorder of its own) turns it off so its role does not grant
    /// them; what is still published to the context's recorder is then dropped and counted in
    /// [`Recorder::dropped`](crate::events::Recorder::dropped).
    pub fn event_recorder(mut self, enabled: bool) -> Self {
        self.settings.event_recorder = enabled;
        self
    }
}
