//! [`WatchFilter`]: what one watch of a controller applies to its events — the controller's
//! event filters, then the watch's own predicate — on the objects or their lean metadata.

use std::sync::Arc;

use kube::Resource;
use kube::core::ObjectMeta;

use super::combine::both;
use super::{AnyObject, Predicate};

/// A predicate of any kind: what [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter)
/// keeps.
pub(crate) type EventFilter = Arc<dyn for<'a> Predicate<AnyObject<'a>>>;

/// Passes every event: the predicate of a watch added without one.
pub(crate) struct Everything;

impl<K> Predicate<K> for Everything {
    fn passes_all(&self) -> bool {
        true
    }
    fn create_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
    fn update_lean(&self, _old: &ObjectMeta, _new: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
    fn delete_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
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

    /// Whether a create passes, judged from the object's lean metadata alone; `None` when a
    /// predicate needs the object.
    pub(crate) fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        let events = self.events.iter().map(|p| p.create_lean(meta));
        events.fold(self.own.create_lean(meta), both)
    }

    /// Whether an update passes, judged from the lean metadata alone (see
    /// [`create_lean`](Self::create_lean)).
    pub(crate) fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        let events = self.events.iter().map(|p| p.update_lean(old, new));
        events.fold(self.own.update_lean(old, new), both)
    }

    /// Whether a delete passes, judged from the lean metadata alone (see
    /// [`create_lean`](Self::create_lean)).
    pub(crate) fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        let events = self.events.iter().map(|p| p.delete_lean(meta));
        events.fold(self.own.delete_lean(meta), both)
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
