//! Predicates: which watch events of a controller become requests.
//!
//! A [`Predicate<K>`] sees the whole object of an event of kind `K` — the object of a create or
//! a delete, the old and the new object of an update — as controller-runtime's typed predicates
//! do. Attach one to a watch with
//! [`Watch::predicate`](crate::controller::Watch::predicate); combine several into one with
//! [`and`], [`or`] and [`not`]; write one from a closure over the object with [`from_fn`] (every
//! event; for an update, the new object) or [`update_fn`] (updates only).
//!
//! The built-in predicates ([`GenerationChanged`], [`LabelsChanged`], [`AnnotationsChanged`],
//! [`ResourceVersionChanged`], [`LabelSelector`]) and [`meta_fn`] read metadata only, so they
//! are predicates of every kind ([`HasMeta`]). Only such metadata-level predicates can filter
//! all the watches of a controller at once
//! ([`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter)), since those watches
//! have different kinds: there, a predicate sees each object as an [`AnyObject`] — its
//! metadata. To write your own, implement `Predicate<K>` for every `K: HasMeta`.
//!
//! Resyncs and relists arrive as updates whose old and new objects have the same
//! `resourceVersion`; [`ResourceVersionChanged`] and [`GenerationChanged`] drop them — so a
//! reconciler that must look again periodically returns
//! [`Action::requeue_after`](crate::controller::Action::requeue_after) rather than relying on
//! the resync period.
//!
//! # Your own writes and the events they cause
//!
//! A predicate sees the reconciler's own writes like anyone else's. Whatever it drops never
//! comes back as a reconcile, so never end a reconcile expecting the event of your own write
//! to start the next step: go on with the object the write returned, or return
//! [`Action::requeue`](crate::controller::Action::requeue). In particular:
//!
//! - [`GenerationChanged`] drops every update that leaves `metadata.generation` alone: writes
//!   of metadata (finalizers, labels, annotations, owner references — what
//!   [`finalizer`](crate::util::finalizer) adds, what
//!   [`server_side_apply`](crate::util::server_side_apply) of metadata changes), writes of the
//!   status through the status subresource, and every update of a kind without a generation
//!   (ConfigMaps, Secrets). The [`finalizer`](crate::util::finalizer) helper therefore goes on
//!   with the updated object in the reconcile that added the finalizer.
//! - [`LabelsChanged`] and [`AnnotationsChanged`] drop spec and status changes, so a status you
//!   write and then wait on (say, an owned Deployment's rollout) never comes back through them.
//! - On an owned or watched kind, through
//!   [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter), they also
//!   drop the status updates of the objects you created (a Deployment becoming available) and
//!   every update of a kind without a generation (someone editing your ConfigMap): put them on
//!   the primary watch alone ([`Watch::predicate`](crate::controller::Watch::predicate)) unless
//!   that is what you want.
//!
//! - A status written with [`set_status_condition`](crate::util::set_status_condition) and
//!   [`Context::patch_status`](crate::controller::Context::patch_status) is a write of the status
//!   subresource: [`GenerationChanged`], [`LabelsChanged`] and [`AnnotationsChanged`] drop its
//!   event. Compute every condition of a step in one reconcile (or requeue), never "set
//!   `Progressing` now, `Ready` when the event comes back".
//!
//! The start of a deletion is never dropped by [`GenerationChanged`], [`LabelsChanged`] or
//! [`AnnotationsChanged`]: the update that sets `metadata.deletionTimestamp` passes them all
//! (the API server bumps the generation there only for kinds that have one), so the cleanup of a
//! finalizer runs whatever the kind.
//!
//! # Predicates that select objects, and finalizers
//!
//! [`LabelSelector`], [`from_fn`] and [`meta_fn`] judge an update by the new object alone (as
//! controller-runtime's do): an object that stops matching is dropped from then on, its
//! deletion included. If the reconciler put a [`finalizer`](crate::util::finalizer) on it while
//! it matched, the cleanup never runs and the object stays `Terminating`. Let deletions through
//! beside the selection, and clean up objects outside it:
//!
//! ```
//! use controller_runtime::controller::predicate::{LabelSelector, meta_fn, or};
//! use kube::core::Selector;
//!
//! let selector: Selector = [("app".to_owned(), "web".to_owned())].into_iter().collect();
//! let selected_or_deleting = or(
//!     LabelSelector(selector),
//!     meta_fn(|meta| meta.deletion_timestamp.is_some()),
//! );
//! # let _ = selected_or_deleting;
//! ```
//!
//! # What the framework lets through whatever the predicates say
//!
//! In a [sharded](crate::sharding) manager, the sharder asks a shard to let go of an object by
//! labelling it, and only a reconcile of that shard acknowledges the request. The update that
//! asks passes the primary watch whatever its predicates say (it changes labels only, which
//! [`GenerationChanged`] drops): otherwise the object would never move. Its reconcile is the
//! acknowledgement; the reconciler itself is not called for it.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use kube::core::{ObjectMeta, Selector, SelectorExt};

/// Decides whether a create, update or delete event of an object of kind `K` enqueues a
/// request. Each method defaults to `true` (let the event through).
pub trait Predicate<K>: Send + Sync + 'static {
    /// An object appeared (including the initial list).
    fn create(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }

    /// An object changed from `old` to `new`.
    fn update(&self, old: &K, new: &K) -> bool {
        let _ = (old, new);
        true
    }

    /// An object was deleted (`obj` is its last known state).
    fn delete(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }

    /// Whether this predicate passes every event whatever its objects, so that they need not
    /// be decoded to judge them (a compact cache's); true only of the predicate of a watch
    /// given none.
    #[doc(hidden)]
    fn passes_all(&self) -> bool {
        false
    }
}

/// Shared and boxed predicates (`Arc<dyn Predicate<K>>`, `Box<dyn Predicate<K>>`) are
/// predicates too.
macro_rules! forward_predicate {
    ($pointer:ident) => {
        impl<K, P: Predicate<K> + ?Sized> Predicate<K> for $pointer<P> {
            fn create(&self, obj: &K) -> bool {
                (**self).create(obj)
            }
            fn update(&self, old: &K, new: &K) -> bool {
                (**self).update(old, new)
            }
            fn delete(&self, obj: &K) -> bool {
                (**self).delete(obj)
            }
            fn passes_all(&self) -> bool {
                (**self).passes_all()
            }
        }
    };
}

forward_predicate!(Arc);
forward_predicate!(Box);

/// What metadata-level predicates read: implemented for every `kube::Resource` and for
/// [`AnyObject`], so a predicate written for every `K: HasMeta` works on any watch and in
/// [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter).
pub trait HasMeta {
    /// The object's metadata.
    fn object_meta(&self) -> &ObjectMeta;
}

impl<K: Resource> HasMeta for K {
    fn object_meta(&self) -> &ObjectMeta {
        self.meta()
    }
}

/// An object of any kind, seen through its metadata: what the predicates of
/// [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter) get.
#[derive(Clone, Copy, Debug)]
pub struct AnyObject<'a> {
    meta: &'a ObjectMeta,
}

impl<'a> AnyObject<'a> {
    /// The object whose metadata is `meta`.
    pub fn new(meta: &'a ObjectMeta) -> Self {
        Self { meta }
    }

    /// The object's metadata.
    pub fn meta(&self) -> &'a ObjectMeta {
        self.meta
    }
}

impl HasMeta for AnyObject<'_> {
    fn object_meta(&self) -> &ObjectMeta {
        self.meta
    }
}

/// Whether `new` is the first state of `old` with a deletion timestamp: the update that
/// starts a deletion, which the change predicates always pass (a finalizer's cleanup waits
/// for it).
fn deletion_started(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.deletion_timestamp.is_none() && new.deletion_timestamp.is_some()
}

/// Passes updates that change `metadata.generation` (spec changes, for types that have one),
/// and the update that starts a deletion; creates and deletes pass. Status-only and
/// metadata-only updates and resyncs are dropped — your own included: see
/// [the module docs](self#your-own-writes-and-the-events-they-cause).
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl<K: HasMeta> Predicate<K> for GenerationChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        let (old, new) = (old.object_meta(), new.object_meta());
        old.generation != new.generation || deletion_started(old, new)
    }
}

/// Passes updates that change the labels, and the update that starts a deletion; creates and
/// deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl<K: HasMeta> Predicate<K> for LabelsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        let (old, new) = (old.object_meta(), new.object_meta());
        old.labels != new.labels || deletion_started(old, new)
    }
}

/// Passes updates that change the annotations, and the update that starts a deletion; creates
/// and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl<K: HasMeta> Predicate<K> for AnnotationsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        let (old, new) = (old.object_meta(), new.object_meta());
        old.annotations != new.annotations || deletion_started(old, new)
    }
}

/// Passes updates that change `metadata.resourceVersion` (drops resyncs and relists of
/// unchanged objects); creates and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl<K: HasMeta> Predicate<K> for ResourceVersionChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.object_meta().resource_version != new.object_meta().resource_version
    }
}

/// Passes events of objects whose labels match a selector (for updates: the new object).
#[derive(Clone, Debug)]
pub struct LabelSelector(pub Selector);

impl LabelSelector {
    fn matches(&self, meta: &ObjectMeta) -> bool {
        match &meta.labels {
            Some(labels) => self.0.matches(labels),
            None => self.0.matches(&Default::default()),
        }
    }
}

impl<K: HasMeta> Predicate<K> for LabelSelector {
    fn create(&self, obj: &K) -> bool {
        self.matches(obj.object_meta())
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        self.matches(new.object_meta())
    }
    fn delete(&self, obj: &K) -> bool {
        self.matches(obj.object_meta())
    }
}

/// Passes the events whose object `f` accepts (for an update: the new object); built with
/// [`from_fn`].
pub struct FromFn<K, F> {
    f: F,
    _kind: PhantomData<fn(&K)>,
}

/// A predicate of kind `K` from a closure over the object: `f(obj)` decides creates and
/// deletes, `f(new)` updates (controller-runtime's `NewPredicateFuncs`). Annotate the
/// argument's type: `from_fn(|deployment: &Deployment| ..)`.
pub fn from_fn<K, F>(f: F) -> FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    FromFn {
        f,
        _kind: PhantomData,
    }
}

impl<K, F> fmt::Debug for FromFn<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

impl<K: 'static, F> Predicate<K> for FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    fn create(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        (self.f)(new)
    }
    fn delete(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
}

/// Passes the updates `f(old, new)` accepts, and every create and delete; built with
/// [`update_fn`].
pub struct UpdateFn<K, F> {
    f: F,
    _kind: PhantomData<fn(&K)>,
}

/// A predicate of kind `K` that filters updates with a closure over the old and the new object
/// (say, "the spec field I care about changed"); creates and deletes pass.
pub fn update_fn<K, F>(f: F) -> UpdateFn<K, F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    UpdateFn {
        f,
        _kind: PhantomData,
    }
}

impl<K, F> fmt::Debug for UpdateFn<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UpdateFn")
    }
}

impl<K: 'static, F> Predicate<K> for UpdateFn<K, F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    fn update(&self, old: &K, new: &K) -> bool {
        (self.f)(old, new)
    }
}

/// Passes the events whose object's metadata `f` accepts (for an update: the new object's), for
/// objects of every kind; built with [`meta_fn`].
#[derive(Clone, Copy)]
pub struct MetaFn<F>(F);

/// A metadata-level predicate from a closure over `ObjectMeta`: works on any watch and in
/// [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter).
pub fn meta_fn<F>(f: F) -> MetaFn<F>
where
    F: Fn(&ObjectMeta) -> bool + Send + Sync + 'static,
{
    MetaFn(f)
}

impl<F> fmt::Debug for MetaFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MetaFn")
    }
}

impl<K: HasMeta, F> Predicate<K> for MetaFn<F>
where
    F: Fn(&ObjectMeta) -> bool + Send + Sync + 'static,
{
    fn create(&self, obj: &K) -> bool {
        (self.0)(obj.object_meta())
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        (self.0)(new.object_meta())
    }
    fn delete(&self, obj: &K) -> bool {
        (self.0)(obj.object_meta())
    }
}

/// Passes an event when both predicates do; built with [`and`].
#[derive(Clone, Debug)]
pub struct And<A, B>(A, B);

/// Passes an event when either predicate does; built with [`or`].
#[derive(Clone, Debug)]
pub struct Or<A, B>(A, B);

/// Passes an event when the predicate does not; built with [`not`].
#[derive(Clone, Debug)]
pub struct Not<A>(A);

/// Both `a` and `b` must pass.
pub fn and<A, B>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// Either `a` or `b` must pass.
pub fn or<A, B>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// `a` must not pass.
pub fn not<A>(a: A) -> Not<A> {
    Not(a)
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for And<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) && self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) && self.1.delete(obj)
    }
    fn passes_all(&self) -> bool {
        self.0.passes_all() && self.1.passes_all()
    }
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Or<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) || self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) || self.1.delete(obj)
    }
    fn passes_all(&self) -> bool {
        self.0.passes_all() || self.1.passes_all()
    }
}

impl<K, A: Predicate<K>> Predicate<K> for Not<A> {
    fn create(&self, obj: &K) -> bool {
        !self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        !self.0.delete(obj)
    }
}

/// A predicate of any kind: what [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter)
/// keeps.
pub(crate) type EventFilter = Arc<dyn for<'a> Predicate<AnyObject<'a>>>;

/// Passes every event: the predicate of a watch added without one.
pub(crate) struct Everything;

impl<K> Predicate<K> for Everything {
    fn passes_all(&self) -> bool {
        true
    }
}

/// The predicates one watch of kind `K` applies: the controller's event filters (on the
/// object's metadata), then the watch's own predicate (on the object). An event must pass all.
pub(crate) struct WatchFilter<K> {
    events: Arc<[EventFilter]>,
    own: Box<dyn Predicate<K>>,
}

impl<K: Resource + 'static> WatchFilter<K> {
    /// The filter of a watch with predicate `own`, under the controller's `events` filters.
    pub(crate) fn new(events: Arc<[EventFilter]>, own: Box<dyn Predicate<K>>) -> Self {
        Self { events, own }
    }

    /// Whether every event passes whatever its objects: no event filter, and no predicate of
    /// the watch's own.
    pub(crate) fn passes_all(&self) -> bool {
        self.events.is_empty() && self.own.passes_all()
    }

    /// Whether a create of `obj` passes.
    pub(crate) fn create(&self, obj: &K) -> bool {
        let any = AnyObject::new(obj.meta());
        self.events.iter().all(|p| p.create(&any)) && self.own.create(obj)
    }

    /// Whether an update from `old` to `new` passes.
    pub(crate) fn update(&self, old: &K, new: &K) -> bool {
        let (any_old, any_new) = (AnyObject::new(old.meta()), AnyObject::new(new.meta()));
        self.events.iter().all(|p| p.update(&any_old, &any_new)) && self.own.update(old, new)
    }

    /// Whether a delete of `obj` passes.
    pub(crate) fn delete(&self, obj: &K) -> bool {
        let any = AnyObject::new(obj.meta());
        self.events.iter().all(|p| p.delete(&any)) && self.own.delete(obj)
    }
}

#[cfg(test)]
#[path = "predicate_tests.rs"]
mod tests;
