//! The event handlers a controller adds to the informers it watches: they filter events through
//! the predicates and turn the rest into keys on the controller's queue (handlers only enqueue).

use std::any::type_name;
use std::sync::Arc;

use indexer::{ObjectKey, key_of};
use informer::{DeletedObject, Object, Registration, SharedIndexInformer, handler};
use workqueue::RateLimitingQueue;

use crate::controller::predicate::WatchFilter;
use crate::controller::state::ControllerState;
use crate::error::Error;

/// A secondary watch (`owns`, `watches`): enqueues the keys `mapper` returns for each event that
/// passes the predicates (for an update, those of the old and of the new object).
pub(crate) fn register_secondary<W, I, F>(
    informer: &SharedIndexInformer<W>,
    queue: &RateLimitingQueue<ObjectKey>,
    filter: WatchFilter<W>,
    mapper: F,
) -> Result<Registration, Error>
where
    W: Object,
    I: IntoIterator<Item = ObjectKey>,
    F: Fn(&W) -> I + Send + Sync + 'static,
{
    let filter = Arc::new(filter);
    let mapper = Arc::new(mapper);
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    let (p_add, p_update, p_delete) = (filter.clone(), filter.clone(), filter);
    let (m_add, m_update, m_delete) = (mapper.clone(), mapper.clone(), mapper);
    let registration = informer.add_event_handler(
        handler()
            .named(type_name::<W>())
            .on_add(move |obj: Arc<W>, _| {
                if p_add.create(&obj) {
                    m_add(&obj).into_iter().for_each(|key| on_add.add(key));
                }
            })
            .on_update(move |old: Arc<W>, new: Arc<W>| {
                if p_update.update(&old, &new) {
                    m_update(&old)
                        .into_iter()
                        .for_each(|key| on_update.add(key));
                    m_update(&new)
                        .into_iter()
                        .for_each(|key| on_update.add(key));
                }
            })
            .on_delete(move |deleted: DeletedObject<W>| {
                if let Some(obj) = deleted.object()
                    && p_delete.delete(obj)
                {
                    m_delete(obj).into_iter().for_each(|key| on_delete.add(key));
                }
            }),
    )?;
    Ok(registration)
}

/// The primary watch: enqueues the object's own key, remembers deleted objects' last state and
/// wakes read-your-own-writes waiters.
pub(crate) fn register_primary<K>(
    informer: &SharedIndexInformer<K>,
    queue: &RateLimitingQueue<ObjectKey>,
    state: &Arc<ControllerState<K>>,
    filter: WatchFilter<K>,
) -> Result<Registration, Error>
where
    K: Object,
{
    let filter = Arc::new(filter);
    let (q_add, q_update, q_delete) = (queue.clone(), queue.clone(), queue.clone());
    let (p_add, p_update, p_delete) = (filter.clone(), filter.clone(), filter);
    let (s_add, s_update, s_delete) = (state.clone(), state.clone(), state.clone());
    let registration = informer.add_event_handler(
        handler()
            .named(type_name::<K>())
            .on_add(move |obj: Arc<K>, _| {
                let Ok(key) = key_of(obj.as_ref()) else {
                    return;
                };
                s_add.deleted.lock().remove(&key);
                s_add.writes.cache_changed();
                if p_add.create(&obj) {
                    q_add.add(key);
                }
            })
            .on_update(move |old: Arc<K>, new: Arc<K>| {
                s_update.writes.cache_changed();
                if p_update.update(&old, &new)
                    && let Ok(key) = key_of(new.as_ref())
                {
                    q_update.add(key);
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
                    q_delete.add(key);
                }
            }),
    )?;
    Ok(registration)
}
