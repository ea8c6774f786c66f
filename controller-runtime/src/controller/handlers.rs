//! The event handlers a controller adds to the informers it watches: they filter events through
//! the predicates and turn the rest into keys on the controller's queue (handlers only enqueue).
//!
//! The informers hold the watched kind in its cache's storage: typed (`K`) or compact
//! (`Compact<K>`, see [`Storage`](crate::cache::Storage)). Either way the handlers read an
//! event's metadata at once and its typed object only when a predicate that reads more than the
//! lean metadata (annotations, a closure) or a `watches` mapper needs it ([`TypedFn`]), once per
//! object per event: the primary watch, `owns`, and the built-in metadata predicates
//! (`GenerationChanged`, `LabelsChanged`, `ResourceVersionChanged`, `LabelSelector`) never
//! decode a body.
//!
//! Each key goes in with controller-runtime's priority: [`Priority::LOW`] for the adds of an
//! informer's initial list and for resyncs (an update whose old and new objects have the same
//! resourceVersion), [`Priority::NORMAL`] for every other event. The plain queue ignores it.

use std::any::type_name;
use std::cell::OnceCell;
use std::sync::Arc;

use indexer::ObjectKey;
use indexer::compact::Compact;
use informer::{Change, DeletedObject, Event, Object, Registration, SharedIndexInformer, handler};
use kube::core::ObjectMeta;
use workqueue::Priority;

use crate::cache::CompactInformer;
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

/// The typed object of an event's object as the cache stores it (`S`: `K` itself, or
/// `Compact<K>`); `None` when it does not decode (logged where it is decoded).
pub(crate) type TypedFn<S, K> = Arc<dyn Fn(&Arc<S>) -> Option<Arc<K>> + Send + Sync>;

/// The typed objects of a typed cache: the objects themselves.
pub(crate) fn typed_as_is<K: Object>() -> TypedFn<K, K> {
    Arc::new(|obj: &Arc<K>| Some(Arc::clone(obj)))
}

/// The informers of a compact cache, and how its events' objects are decoded: through the
/// cache's reader, so with its recently decoded objects when it keeps some.
pub(crate) fn compact_parts<K: Object>(
    informers: &[CompactInformer<K>],
) -> (CompactInformers<K>, TypedFn<Compact<K>, K>) {
    let reader = informers.first().map(|compact| compact.reader.clone());
    let decode: TypedFn<Compact<K>, K> = Arc::new(move |obj: &Arc<Compact<K>>| match &reader {
        Some(reader) => reader.decode(obj),
        None => obj.decode_fresh().ok().map(Arc::new),
    });
    let informers = informers
        .iter()
        .map(|compact| Arc::clone(&compact.informer))
        .collect();
    (informers, decode)
}

/// The informers of one compact cache.
type CompactInformers<K> = Vec<Arc<SharedIndexInformer<Compact<K>>>>;

/// A key from an object's metadata.
type MetaMapFn = Arc<dyn Fn(&ObjectMeta) -> Option<ObjectKey> + Send + Sync>;

/// Keys from a whole object.
type ObjectMapFn<W> = Arc<dyn Fn(&W) -> Vec<ObjectKey> + Send + Sync>;

/// How a secondary watch turns an object into the keys it enqueues.
pub(crate) enum Mapper<W> {
    /// From the object's metadata alone (`owns`: its controller owner reference), so an event
    /// of a compact cache is never decoded for it.
    Meta(MetaMapFn),
    /// From the whole object (a `watches` mapper).
    Object(ObjectMapFn<W>),
}

impl<W> Clone for Mapper<W> {
    fn clone(&self) -> Self {
        match self {
            Self::Meta(map) => Self::Meta(Arc::clone(map)),
            Self::Object(map) => Self::Object(Arc::clone(map)),
        }
    }
}

/// One object of an event: its stored form, and its typed form decoded at most once.
struct EventObject<'a, S, K> {
    stored: &'a Arc<S>,
    typed: &'a TypedFn<S, K>,
    decoded: OnceCell<Option<Arc<K>>>,
}

impl<'a, S: Object, K> EventObject<'a, S, K> {
    fn new(stored: &'a Arc<S>, typed: &'a TypedFn<S, K>) -> Self {
        Self {
            stored,
            typed,
            decoded: OnceCell::new(),
        }
    }

    fn meta(&self) -> &ObjectMeta {
        self.stored.meta()
    }

    fn typed(&self) -> Option<&Arc<K>> {
        self.decoded
            .get_or_init(|| (self.typed)(self.stored))
            .as_ref()
    }
}

/// Whether a create or delete of `obj` passes `filter`: from its lean metadata when the
/// filter's predicates read nothing else (`lean`), else from the typed object (`judge`; an
/// object that does not decode passes, so its key still reaches the reconciler).
fn passes_one<S: Object, K: Object>(
    filter: &WatchFilter<K>,
    obj: &EventObject<'_, S, K>,
    lean: impl FnOnce(&WatchFilter<K>, &ObjectMeta) -> Option<bool>,
    judge: impl FnOnce(&WatchFilter<K>, &K) -> bool,
) -> bool {
    if filter.passes_all() {
        return true;
    }
    lean(filter, obj.meta()).unwrap_or_else(|| obj.typed().is_none_or(|typed| judge(filter, typed)))
}

/// Whether an update from `old` to `new` passes `filter` (see [`passes_one`]).
fn passes_update<S: Object, K: Object>(
    filter: &WatchFilter<K>,
    old: &EventObject<'_, S, K>,
    new: &EventObject<'_, S, K>,
) -> bool {
    if filter.passes_all() {
        return true;
    }
    if let Some(passes) = filter.update_lean(old.meta(), new.meta()) {
        return passes;
    }
    match (old.typed(), new.typed()) {
        (Some(old), Some(new)) => filter.update(old, new),
        _ => true,
    }
}

/// Adds one watch's handler to an informer whose objects are the watched kind `K` in a
/// cache's storage (`S`: `K`, or `Compact<K>`), reading their typed form through `typed`.
pub(crate) trait AddHandler<K: Object> {
    /// Adds the handler to `informer`.
    fn add<S: Object>(
        &self,
        informer: &SharedIndexInformer<S>,
        typed: TypedFn<S, K>,
    ) -> Result<Registration, Error>;
}

/// What a secondary watch's handler needs: the controller's intake, the watch's filter and
/// mapper.
pub(crate) struct SecondaryHandler<'a, W> {
    pub(crate) intake: &'a Intake,
    pub(crate) filter: &'a Arc<WatchFilter<W>>,
    pub(crate) mapper: &'a Mapper<W>,
}

impl<W: Object> AddHandler<W> for SecondaryHandler<'_, W> {
    fn add<S: Object>(
        &self,
        informer: &SharedIndexInformer<S>,
        typed: TypedFn<S, W>,
    ) -> Result<Registration, Error> {
        register_secondary(
            informer,
            self.intake,
            Arc::clone(self.filter),
            self.mapper.clone(),
            typed,
        )
    }
}

/// What the primary watch's handler needs: the controller's intake, state, the watch's filter
/// and, in a sharded manager, the drain requests it lets through.
pub(crate) struct PrimaryHandler<'a, K: Object> {
    pub(crate) intake: &'a Intake,
    pub(crate) state: &'a Arc<ControllerState<K>>,
    pub(crate) filter: &'a Arc<WatchFilter<K>>,
    pub(crate) drains: &'a Option<Arc<dyn ShardGuard>>,
}

impl<K: Object> AddHandler<K> for PrimaryHandler<'_, K> {
    fn add<S: Object>(
        &self,
        informer: &SharedIndexInformer<S>,
        typed: TypedFn<S, K>,
    ) -> Result<Registration, Error> {
        register_primary(
            informer,
            self.intake,
            self.state,
            Arc::clone(self.filter),
            self.drains.clone(),
            typed,
        )
    }
}

/// A secondary watch (`owns`, `watches`): enqueues the keys `mapper` returns for each event that
/// passes the predicates (for an update, those of the old and of the new object), and wakes keys
/// skipped for a stale cache.
fn register_secondary<S, W>(
    informer: &SharedIndexInformer<S>,
    intake: &Intake,
    filter: Arc<WatchFilter<W>>,
    mapper: Mapper<W>,
    typed: TypedFn<S, W>,
) -> Result<Registration, Error>
where
    S: Object,
    W: Object,
{
    let intake = intake.clone();
    let keys = intake.clone();
    let enqueue = move |obj: &EventObject<'_, S, W>, priority: Priority| match &mapper {
        Mapper::Meta(map) => {
            if let Some(key) = map(obj.meta()) {
                keys.add(key, priority);
            }
        }
        Mapper::Object(map) => {
            if let Some(typed) = obj.typed() {
                map(typed)
                    .into_iter()
                    .for_each(|key| keys.add(key, priority));
            }
        }
    };
    let registration = informer.add_event_handler(handler().named(type_name::<W>()).on_event(
        move |event: Event<S>| {
            intake.progressed();
            match event.change {
                Change::Added {
                    object,
                    in_initial_list,
                } => {
                    let object = EventObject::new(&object, &typed);
                    if passes_one(
                        &filter,
                        &object,
                        WatchFilter::create_lean,
                        WatchFilter::create,
                    ) {
                        enqueue(&object, add_priority(in_initial_list));
                    }
                }
                Change::Updated { old, new, resync } => {
                    let (old, new) = (
                        EventObject::new(&old, &typed),
                        EventObject::new(&new, &typed),
                    );
                    if passes_update(&filter, &old, &new) {
                        let priority = update_priority(resync);
                        enqueue(&old, priority);
                        enqueue(&new, priority);
                    }
                }
                Change::Deleted(deleted) => {
                    if let Some(obj) = deleted.object() {
                        let obj = EventObject::new(obj, &typed);
                        if passes_one(&filter, &obj, WatchFilter::delete_lean, WatchFilter::delete)
                        {
                            enqueue(&obj, Priority::NORMAL);
                        }
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
fn register_primary<S, K>(
    informer: &SharedIndexInformer<S>,
    intake: &Intake,
    state: &Arc<ControllerState<K>>,
    filter: Arc<WatchFilter<K>>,
    drains: Option<Arc<dyn ShardGuard>>,
    typed: TypedFn<S, K>,
) -> Result<Registration, Error>
where
    S: Object,
    K: Object,
{
    let (intake, state) = (intake.clone(), state.clone());
    let registration = informer.add_event_handler(handler().named(type_name::<K>()).on_event(
        move |Event { key, change }: Event<S>| {
            intake.progressed();
            match change {
                Change::Added {
                    object,
                    in_initial_list,
                } => {
                    state.deleted.lock().remove(&key);
                    let object = EventObject::new(&object, &typed);
                    if passes_one(
                        &filter,
                        &object,
                        WatchFilter::create_lean,
                        WatchFilter::create,
                    ) {
                        intake.add(key, add_priority(in_initial_list));
                    }
                }
                Change::Updated { old, new, resync } => {
                    let drain_asked = drains.as_ref().is_some_and(|drains| {
                        drains.asks_to_let_go(new.meta()) && !drains.asks_to_let_go(old.meta())
                    });
                    let (old, new) = (
                        EventObject::new(&old, &typed),
                        EventObject::new(&new, &typed),
                    );
                    if drain_asked || passes_update(&filter, &old, &new) {
                        intake.add(key, update_priority(resync));
                    }
                }
                Change::Deleted(deleted) => {
                    state.staleness.forget(&key);
                    let stored = match &deleted {
                        DeletedObject::Known(obj) => Some(obj),
                        DeletedObject::Unknown(tombstone) => tombstone.obj.as_ref(),
                    };
                    let obj = stored.map(|stored| EventObject::new(stored, &typed));
                    let passes = obj.as_ref().is_none_or(|obj| {
                        passes_one(&filter, obj, WatchFilter::delete_lean, WatchFilter::delete)
                    });
                    if passes {
                        // The last known state, for the reconcile of the deletion.
                        if let Some(last) = obj.as_ref().and_then(EventObject::typed) {
                            state.deleted.lock().insert(key.clone(), Arc::clone(last));
                        }
                        intake.add(key, Priority::NORMAL);
                    }
                }
            }
        },
    ))?;
    Ok(registration)
}
