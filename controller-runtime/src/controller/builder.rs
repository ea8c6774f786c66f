//! [`Controller`]: the builder that wires watches, predicates and a workqueue to a
//! [`Reconciler`], and registers the result with a [`Manager`].

use std::any::type_name;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use informer::Registration;
use parking_lot::Mutex;
use workqueue::{QueueConfig, RateLimiter, RateLimitingQueue, default_controller_rate_limiter};

use crate::controller::handlers::{register_primary, register_secondary};
use crate::controller::predicate::{AnyObject, EventFilter, Everything, Predicate, WatchFilter};
use crate::controller::reconciler::Reconciler;
use crate::controller::ryow::{DEFAULT_READ_YOUR_WRITES_TIMEOUT, WriteTracker};
use crate::controller::state::ControllerState;
use crate::controller::stats::ControllerStats;
use crate::controller::worker::{ControllerRun, Settings};
use crate::error::Error;
use crate::kind::Kind;
use crate::manager::running::Manager;
use crate::owner::controller_owner_key;
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
        ControllerBuilder {
            manager: self.manager,
            name: K::kind(&()).to_lowercase(),
            for_predicate: Box::new(predicate),
            event_filters: Vec::new(),
            watches: Vec::new(),
            max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
            rate_limiter: None,
            reconcile_timeout: None,
            read_your_writes_timeout: DEFAULT_READ_YOUR_WRITES_TIMEOUT,
            need_leader_election: true,
        }
    }
}

/// Registers one secondary watch: given the queue and the controller's event filters, adds a
/// handler to the watched type's informer.
type WatchFn = Box<
    dyn FnOnce(
        &Manager,
        &RateLimitingQueue<ObjectKey>,
        &Arc<[EventFilter]>,
    ) -> Result<Registration, Error>,
>;

/// Builds a controller for the primary type `K`; from [`Controller::for_`].
pub struct ControllerBuilder<'m, K> {
    manager: &'m Manager,
    name: String,
    for_predicate: Box<dyn Predicate<K>>,
    event_filters: Vec<EventFilter>,
    watches: Vec<(String, WatchFn)>,
    max_concurrent_reconciles: usize,
    rate_limiter: Option<Box<dyn RateLimiter<ObjectKey>>>,
    reconcile_timeout: Option<Duration>,
    read_your_writes_timeout: Duration,
    need_leader_election: bool,
}

impl<K> std::fmt::Debug for ControllerBuilder<'_, K> {
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
            .finish_non_exhaustive()
    }
}

impl<'m, K: Kind> ControllerBuilder<'m, K> {
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
        self.watches_with::<C, _, _>(
            |child: &C| controller_owner_key::<K>(child.meta()),
            predicate,
        )
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
        let register: WatchFn = Box::new(move |manager, queue, event_filters| {
            let filter = WatchFilter::new(Arc::clone(event_filters), own);
            register_secondary(&manager.informer::<W>(), queue, filter, mapper)
        });
        self.watches.push((type_name::<W>().to_owned(), register));
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

    /// Registers the watches and adds the controller to the manager; it runs from
    /// [`Manager::start`]. Fails if the name is taken, a setting is invalid, or the manager has
    /// started.
    pub fn build<R: Reconciler<K>>(self, reconciler: R) -> Result<ControllerHandle, Error> {
        if self.max_concurrent_reconciles == 0 {
            return Err(Error::InvalidSetting {
                controller: self.name,
                reason: "max_concurrent_reconciles must be at least 1".to_owned(),
            });
        }
        if self.reconcile_timeout == Some(Duration::ZERO) {
            return Err(Error::InvalidSetting {
                controller: self.name,
                reason: "reconcile_timeout must be positive".to_owned(),
            });
        }
        let manager = self.manager;
        manager.reserve_name(&self.name)?;
        let limiter: Box<dyn RateLimiter<ObjectKey>> = self
            .rate_limiter
            .unwrap_or_else(|| Box::new(default_controller_rate_limiter()));
        let mut queue_config = QueueConfig::new().name(self.name.clone());
        if let Some(provider) = manager.metrics().queue_provider() {
            queue_config = queue_config.metrics(provider);
        }
        let queue = RateLimitingQueue::with_config(limiter, queue_config);

        let (recorder, recorder_task) =
            Recorder::new(manager.client().clone(), &self.name, DEFAULT_EVENT_QUEUE);
        manager.add(recorder_task)?;
        let primary = manager.informer::<K>();
        let state = Arc::new(ControllerState {
            name: self.name.clone().into(),
            client: manager.client().clone(),
            cache: manager.cache(),
            primary: Arc::clone(&primary),
            writes: WriteTracker::default(),
            deleted: Mutex::new(HashMap::new()),
            read_your_writes_timeout: self.read_your_writes_timeout,
            recorder,
        });
        let event_filters: Arc<[EventFilter]> = self.event_filters.into();
        let primary_filter = WatchFilter::new(Arc::clone(&event_filters), self.for_predicate);
        let mut registrations = vec![(
            type_name::<K>().to_owned(),
            register_primary(&primary, &queue, &state, primary_filter)?,
        )];
        for (name, register) in self.watches {
            registrations.push((name, register(manager, &queue, &event_filters)?));
        }

        let stats = Arc::new(ControllerStats::default());
        let run = ControllerRun {
            state,
            queue,
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
        manager.add(run)?;
        Ok(ControllerHandle {
            name: self.name,
            stats,
        })
    }
}

/// A built controller: its name and live counters.
#[derive(Clone, Debug)]
pub struct ControllerHandle {
    name: String,
    stats: Arc<ControllerStats>,
}

impl ControllerHandle {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The controller's reconcile counters.
    pub fn stats(&self) -> &ControllerStats {
        &self.stats
    }
}
