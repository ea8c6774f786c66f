//! The event handlers a controller adds to the informers it watches: they filter events through
//! the predicates and turn the rest into keys on the controller's queue (handlers only enqueue).
//!
//! Each key goes in with controller-runtime's priority: [`Priority::LOW`] for the adds of an
//! informer's initial list and for resyncs (an update whose old and new objects have the same
//! resourceVersion), [`Priority::NORMAL`] for every other event. The plain queue ignores it.

use std::any::type_name;
use std::sync::Arc;

use indexer::ObjectKey;
use informer::{Change, DeletedObject, Event, Object, Registration, SharedIndexInformer, handler};
use workqueue::Priority;

use crate::controller::error::Error;
use crate::controller::intake::Intake;
use crate::controller::predicate::WatchFilter;
use crate::controller::shard::ShardGuard;
use crate::controller::state::ControllerState;

/// The priority of an add: low for the informer's initial list.
fn add_priority(in_initial_list: bool) -> Priority {
    if in_initial_list {
        Priority::LOW
    } else {
        Priority::NORMAL
    }
}

/// The priority of an update: low for a resync (the informer found nothing changed: same
/// resourceVersion).
fn update_priority(resync: bool) -> Priority {
    if resync {
        Priority::LOW
    } else {
        Priority::NORMAL
    }
}

/// A secondary watch (`owns`, `watches`): enqueues the keys `mapper` returns for each event that
/// passes the predicates (for an update, those of the old and of the new object), and wakes keys
/// skipped for a stale cache.
pub(crate) fn register_secondary<W, I, F>(
    informer: &SharedIndexInformer<W>,
    intake: &Intake,
    filter: Arc<WatchFilter<W>>,
    mapper: Arc<F>,
) -> Result<Registration, Error>
where
    W: Object,
    I: IntoIterator<Item = ObjectKey>,
    F: Fn(&W) -> I + Send + Sync + 'static,
{
    let intake = intake.clone();
    let keys = intake.clone();
    let enqueue = move |obj: &W, priority: Priority| {
        mapper(obj)
            .into_iter()
            .for_each(|key| keys.add(key, priority));
    };
    let registration = informer.add_event_handler(handler().named(type_name::<W>()).on_event(
        move |event: Event<W>| {
            intake.progressed();
            match event.change {
                Change::Added {
                    object,
                    in_initial_list,
                } => {
                    if filter.create(&object) {
                        enqueue(&object, add_priority(in_initial_list));
                    }
                }
                Change::Updated { old, new, resync } => {
                    if filter.update(&old, &new) {
                        let priority = update_priority(resync);
                        enqueue(&old, priority);
                        enqueue(&new, priority);
                    }
                }
                Change::Deleted(deleted) => {
                    if let Some(obj) = deleted.object()
                        && filter.delete(obj)
                    {
                        enqueue(obj, Priority::NORMAL);
                    }
                }
            }
        },
    ))?;
    Ok(registration)
}

/// The primary watch: enqueues the object's own key (the one the informer computed), remembers
/// deleted objects' last state, ends a deleted object's staleness claims and wakes keys skipped
/// for a stale cache. In a sharded manager, `drains` lets through, whatever the predicates say,
/// the update that asks this shard to let go of an object: only a reconcile acknowledges it.
pub(crate) fn register_primary<K>(
    informer: &SharedIndexInformer<K>,
    intake: &Intake,
    state: &Arc<ControllerState<K>>,
    filter: Arc<WatchFilter<K>>,
    drains: Option<Arc<dyn ShardGuard>>,
) -> Result<Registration, Error>
where
    K: Object,
{
    let (intake, state) = (intake.clone(), state.clone());
    let registration = informer.add_event_handler(handler().named(type_name::<K>()).on_event(
        move |Event { key, change }: Event<K>| {
            intake.progressed();
            match change {
                Change::Added {
                    object,
                    in_initial_list,
                } => {
                    state.deleted.lock().remove(&key);
                    if filter.create(&object) {
                        intake.add(key, add_priority(in_initial_list));
                    }
                }
                Change::Updated { old, new, resync } => {
                    let drain_asked = drains.as_ref().is_some_and(|drains| {
                        drains.asks_to_let_go(new.meta()) && !drains.asks_to_let_go(old.meta())
                    });
                    if drain_asked || filter.update(&old, &new) {
                        intake.add(key, update_priority(resync));
                    }
                }
                Change::Deleted(deleted) => {
                    state.staleness.forget(&key);
                    let obj = match &deleted {
                        DeletedObject::Known(obj) => Some(obj),
                        DeletedObject::Unknown(tombstone) => tombstone.obj.as_ref(),
                    };
                    if obj.is_none_or(|obj| filter.delete(obj)) {
                        if let Some(obj) = obj {
                            state.deleted.lock().insert(key.clone(), Arc::clone(obj));
                        }
                        intake.add(key, Priority::NORMAL);
                    }
                }
            }
        },
    ))?;
    Ok(registration)
}
