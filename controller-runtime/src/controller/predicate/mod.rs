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

mod closures;
mod combine;
mod metadata;
mod watch_filter;

use std::sync::Arc;

use kube::Resource;
use kube::core::ObjectMeta;

pub use closures::{FromFn, UpdateFn, from_fn, update_fn};
pub use combine::{And, Not, Or, and, not, or};
pub use metadata::{
    AnnotationsChanged, GenerationChanged, LabelSelector, LabelsChanged, MetaFn,
    ResourceVersionChanged, meta_fn,
};
pub(crate) use watch_filter::{EventFilter, Everything, WatchFilter};

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

    /// [`create`](Self::create) judged from the lean metadata a compact cache keeps at hand
    /// (name, namespace, uid, resourceVersion, generation, labels, owner references, deletion
    /// timestamp, finalizers; not annotations): `Some` when this predicate reads nothing else,
    /// `None` when it needs the object. The built-in predicates that read those fields answer.
    #[doc(hidden)]
    fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        let _ = meta;
        None
    }

    /// [`update`](Self::update) judged from the lean metadata (see
    /// [`create_lean`](Self::create_lean)).
    #[doc(hidden)]
    fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        let _ = (old, new);
        None
    }

    /// [`delete`](Self::delete) judged from the lean metadata (see
    /// [`create_lean`](Self::create_lean)).
    #[doc(hidden)]
    fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        let _ = meta;
        None
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
            fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
                (**self).create_lean(meta)
            }
            fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
                (**self).update_lean(old, new)
            }
            fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
                (**self).delete_lean(meta)
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

#[cfg(test)]
#[path = "../predicate_tests.rs"]
mod tests;
