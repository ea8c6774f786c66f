//! [`ControllerBuilder::build`]: checks the settings, makes the controller's queue — the
//! priority queue or the plain one — registers its watches on the manager's caches and adds it
//! to the manager, its workers monomorphised for that queue.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use informer::Object;
use parking_lot::Mutex;
use workqueue::{
    PriorityQueue, PriorityWorkQueue, QueueConfig, RateLimiter, RateLimitingQueue,
    default_controller_rate_limiter,
};

use crate::controller::builder::ControllerBuilder;
use crate::controller::debounce::{Debounce, Debouncer};
use crate::controller::enqueue::KeySink;
use crate::controller::error::Error;
use crate::controller::handle::ControllerHandle;
use crate::controller::handlers::PrimaryHandler;
use crate::controller::host::{Host, Teardown};
use crate::controller::intake::Intake;
use crate::controller::predicate::{EventFilter, WatchFilter};
use crate::controller::reconciler::Reconciler;
use crate::controller::registered::Registered;
use crate::controller::shard::ShardRole;
use crate::controller::shard_kinds::{register_kind, shard_kind};
use crate::controller::staleness::Staleness;
use crate::controller::state::ControllerState;
use crate::controller::stats::ControllerStats;
use crate::controller::worker::{ControllerRun, Settings};
use crate::events::{DEFAULT_EVENT_QUEUE, Recorder};
use crate::ops::runnable::Runnable;

impl<K: Object> ControllerBuilder<'_, K> {
    /// Registers the watches and adds the controller to the manager; it runs from
    /// [`Manager::start`](crate::manager::Manager::start) — or, built while the manager runs,
    /// at once: the informers of kinds new to the manager start, and the workers start once the
    /// controller's handlers synced (see
    /// [`Cache::wait_for_kind`](crate::cache::Cache::wait_for_kind) for a kind installed late).
    /// Fails if the name is taken, a setting is invalid (no worker, a zero reconcile timeout, a
    /// zero debounce or a maximum wait below it, a declared permission without verbs), a
    /// watched kind's cache settings contradict each other, or the manager has stopped.
    pub fn build<R: Reconciler<K>>(mut self, reconciler: R) -> Result<ControllerHandle, Error> {
        let debounce = self.check()?;
        let manager = self.manager;
        manager.reserve_name(&self.name)?;
        let limiter: Box<dyn RateLimiter<ObjectKey>> = self
            .settings
            .rate_limiter
            .take()
            .unwrap_or_else(|| Box::new(default_controller_rate_limiter()));
        let prioritized = self.settings.priority_queue;
        let mut config = QueueConfig::new().name(self.name.clone());
        if let Some(provider) = manager.metrics().queue_provider(prioritized) {
            config = config.metrics(provider);
        }
        if prioritized {
            self.assemble(
                reconciler,
                PriorityQueue::with_config(limiter, config),
                debounce,
            )
        } else {
            self.assemble(
                reconciler,
                RateLimitingQueue::with_config(limiter, config),
                debounce,
            )
        }
    }

    /// Checks the settings; the debounce they ask for, if any.
    fn check(&self) -> Result<Option<Debounce>, Error> {
        let settings = &self.settings;
        let invalid = |reason: String| Error::InvalidSetting {
            controller: self.name.clone(),
            reason,
        };
        if settings.max_concurrent_reconciles == 0 {
            return Err(invalid(
                "max_concurrent_reconciles must be at least 1".to_owned(),
            ));
        }
        if settings.reconcile_timeout == Some(Duration::ZERO) {
            return Err(invalid("reconcile_timeout must be positive".to_owned()));
        }
        if let Some(rule) = settings
            .permissions
            .iter()
            .find(|r| r.verb_set().is_empty())
        {
            return Err(invalid(format!(
                "the permission on {} has no verbs; add them with `.verbs([...])`",
                rule.resource_name()
            )));
        }
        settings
            .debounce
            .map(|(quiet, max_wait)| Debounce::new(quiet, max_wait).map_err(invalid))
            .transpose()
    }

    /// Registers the watches over `queue` and adds the controller's runnables to the manager.
    fn assemble<R, Q>(
        mut self,
        reconciler: R,
        queue: Q,
        debounce: Option<Debounce>,
    ) -> Result<ControllerHandle, Error>
    where
        R: Reconciler<K>,
        Q: PriorityWorkQueue<Item = ObjectKey>,
    {
        let manager = self.manager;
        let sink: KeySink = Arc::new(queue.clone());
        let debouncer = debounce.map(|debounce| Arc::new(Debouncer::new(debounce, sink.clone())));
        let staleness = Arc::new(Staleness::new(
            self.settings.read_your_writes_timeout,
            sink.clone(),
        ));
        let intake = Intake::new(sink.clone(), debouncer.clone(), Arc::clone(&staleness));

        let (recorder, recorder_task) =
            Recorder::new(manager.client().clone(), &self.name, DEFAULT_EVENT_QUEUE);
        let (spec, predicate, _) = self.primary.into_parts();
        let cache = manager.cache();
        let sharded = match shard_kind(manager, &spec, &self.name, ShardRole::Key) {
            Ok(sharded) => sharded,
            Err(error) => return Err(abandon(manager, &self.name, Vec::new(), error)),
        };
        let primary = match cache.registry.controller_kind_cache(&spec) {
            Ok(primary) => primary,
            Err(error) => return Err(abandon(manager, &self.name, Vec::new(), error)),
        };
        let (shard_guard, drain_requests) = match register_kind(manager, sharded, &primary) {
            Some(guards) => (Some(guards.reconcile), Some(guards.events)),
            None => (None, None),
        };
        let primary_key = spec.key.clone();
        let state = Arc::new(ControllerState {
            name: self.name.clone().into(),
            client: manager.client().clone(),
            cache,
            primary: Arc::clone(&primary),
            dyntype: spec.dyntype,
            primary_kind: primary_key.clone(),
            staleness: Arc::clone(&staleness),
            deleted: Mutex::new(HashMap::new()),
            recorder,
        });
        let event_filters: Arc<[EventFilter]> = self.event_filters.into();
        let primary_filter = Arc::new(WatchFilter::new(Arc::clone(&event_filters), predicate));
        let mut watched = Vec::new();
        let permissions = std::mem::take(&mut self.settings.permissions);
        let handler = PrimaryHandler {
            intake: &intake,
            state: &state,
            filter: &primary_filter,
            drains: &drain_requests,
        };
        let registered =
            Registered::on_cache(primary_key, &primary, &handler).and_then(|primary| {
                watched.push(primary);
                for (_, register) in self.watches {
                    watched.push(register(manager, &self.name, &intake, &event_filters)?);
                }
                // Recorded only once every watch is registered: a failed build declares nothing.
                manager.require_all(permissions)
            });
        if let Err(error) = registered {
            return Err(abandon(manager, &self.name, watched, error));
        }
        let mut teardown = Teardown::default();
        let mut registrations = Vec::new();
        let mut starts = Vec::new();
        for registered in watched {
            staleness.watch(registered.watched);
            starts.extend(registered.starts);
            registrations.extend(registered.registrations);
            teardown.handlers.extend(registered.removals);
            teardown.kinds.push(registered.kind);
        }

        let stats = Arc::new(ControllerStats::default());
        let settings = self.settings;
        let warm_up = settings
            .warm_up
            .unwrap_or_else(|| manager.warm_up_default());
        let run = ControllerRun {
            state,
            queue,
            intake,
            debouncer,
            sources: Mutex::new(self.sources),
            reconciler: Arc::new(reconciler),
            registrations,
            stats: Arc::clone(&stats),
            settings: Settings {
                workers: settings.max_concurrent_reconciles,
                reconcile_timeout: settings.reconcile_timeout,
                sync_timeout: manager.cache_sync_timeout(),
                leadership: if settings.need_leader_election {
                    manager.elector().cloned()
                } else {
                    None
                },
                need_leader_election: settings.need_leader_election,
                shard: shard_guard,
                warm_up,
            },
            metrics: manager.metrics().controller(
                &self.name,
                settings.max_concurrent_reconciles,
                stats.clone(),
                staleness,
            ),
            factory: manager.cache().registry.factory.clone(),
            starts,
            background: Mutex::new(None),
        };
        let mut runnables: Vec<Box<dyn Runnable>> = vec![Box::new(run)];
        if settings.event_recorder {
            runnables.insert(0, Box::new(recorder_task));
        }
        manager.add_controller(&self.name, runnables, teardown)?;
        Ok(ControllerHandle {
            name: self.name,
            stats,
            queue: sink,
        })
    }
}

/// Undoes a build that failed after reserving its name: removes the event handlers it added
/// (the caches it created stay, for a later controller of the kind) and frees the name.
fn abandon(
    manager: &dyn Host,
    name: &str,
    watched: Vec<Registered>,
    error: impl Into<Error>,
) -> Error {
    for registered in watched {
        for removal in registered.removals {
            removal();
        }
    }
    manager.release_name(name);
    error.into()
}
