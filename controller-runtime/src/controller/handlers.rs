//! The event handlers a controller adds to the informers it watches: they filter events through
//! the predicates and turn the rest into keys on the controller's queue (handlers only enqueue).
//!
//! Each key goes in with controller-runtime's priority: [`Priority::LOW`] for the adds of an
//! informer's initial list and for resyncs (an update whose old and new objects have the same
//! resourceVersion), [`Priority::NORMAL`] for every other event. The plain queue ignores it.

use std::any::type_name;
use std::sync::Arc;

use indexer::{ObjectKey, key_of};
use informer::{DeletedObject, Object, Registration, SharedIndexInformer, handler};
use workqueue::Priority;

use crate::controller::error::Error;
use crate::controller::intake::Intake;
use crate::controller::predicate::WatchFilter;
use crate::controller::state::ControllerState;

/// The priority of an add: low for the informer's initial list.
fn add_priority(is_in_initial_list: bool) -> Priority {
    if is_in_initial_list {
        Priority::LOW
    } else {
        Priority::NORMAL
    }
}

/// The priority of an update: low for a resync (nothing changed: same resourceVersion).
fn update_priority<K: Object>(old: &K, new: &K) -> Priority {
    if old.meta().resource_version == new.meta().resource_version {
        Priority::LOW
    } else {
        Priority::NORMAL
    }
}

/// A secondary watch (`owns`, `watches`): enqueues the keys `mapper` returns for each event that
/// passes the predicates (for an update, those of the old and of the new object).
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
    let (on_add, on_update, on_delete) = (intake.clone(), intake.clone(), intake.clone());
    let (p_add, p_update, p_delete) = (filter.clone(), filter.clone(), filter);
    let (m_add, m_update, m_delete) = (mapper.clone(), mapper.clone(), mapper);
    let registration = informer.add_event_handler(
        handler()
            .named(type_name::<W>())
            .on_add(move |obj: Arc<W>, is_in_initial_list| {
                if p_add.create(&obj) {
                    let priority = add_priority(is_in_initial_list);
                    m_add(&obj)
                        .into_iter()
                        .for_each(|key| on_add.add(key, priority));
                }
            })
            .on_update(move |old: Arc<W>, new: Arc<W>| {
                if p_update.update(&old, &new) {
                    let priority = update_priority(old.as_ref(), new.as_ref());
                    m_update(&old)
                        .into_iter()
                        .for_each(|key| on_update.add(key, priority));
                    m_update(&new)
                        .into_iter()
                        .for_each(|key| on_update.add(key, priority));
                }
            })
            .on_delete(move |deleted: DeletedObject<W>| {
                if let Some(obj) = deleted.object()
                    && p_delete.delete(obj)
                {
                    m_delete(obj)
                        .into_iter()
                        .for_each(|key| on_delete.add(key, Priority::NORMAL));
                }
            }),
    )?;
    Ok(registration)
}

/// The primary watch: enqueues the object's own key, remembers deleted objects' last state and
/// wakes read-your-own-writes waiters.
pub(crate) fn register_primary<K>(
    informer: &SharedIndexInformer<K>,
    intake: &Intake,
    state: &Arc<ControllerState<K>>,
    filter: Arc<WatchFilter<K>>,
) -> Result<Registration, Error>
where
    K: Object,
{
    let (q_add, q_update, q_delete) = (intake.clone(), intake.clone(), intake.clone());
    let (p_add, p_update, p_delete) = (filter.clone(), filter.clone(), filter);
    let (s_add, s_update, s_delete) = (state.clone(), state.clone(), state.clone());
    let registration = informer.add_event_handler(
        handler()
            .named(type_name::<K>())
            .on_add(move |obj: Arc<K>, is_in_initial_list| {
                let Ok(key) = key_of(obj.as_ref()) else {
                    return;
                };
                s_add.deleted.lock().remove(&key);
                s_add.writes.cache_changed();
                if p_add.create(&obj) {
                    q_add.add(key, add_priority(is_in_initial_list));
                }
            })
            .on_update(move |old: Arc<K>, new: Arc<K>| {
                s_update.writes.cache_changed();
                if p_update.update(&old, &new)
                    && let Ok(key) = key_of(new.as_ref())
                {
                    q_update.add(key, update_priority(old.as_ref(), new.as_ref()));
                }
            })
            .on_delete(move |deleted: DeletedObject<K>| {
                s_delete.writes.cache_changed();
                let (key, obj) = match &deleted {
                    DeletedObject::Known(obj) => match key_of(obj.as_ref()) {
                        Ok(key) => (key, Some(obj)),
                        Err(_) => return,
                    },
                    DeletedObject::Unknown(tombstone) => {
                        (tombstone.key.clone(), tombstone.obj.as_ref())
                    }
                };
                s_delete.writes.forget(&key);
                if obj.is_none_or(|obj| p_delete.delete(obj)) {
                    if let Some(obj) = obj {
                        s_delete.deleted.lock().insert(key.clone(), Arc::clone(obj));
                    }
                    q_delete.add(key, Priority::NORMAL);
                }
            }),
    )?;
    Ok(registration)
}
