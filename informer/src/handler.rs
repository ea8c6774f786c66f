//! [`ResourceEventHandler`]: what an informer tells its consumers, plus a closure builder
//! ([`handler`]) and a filtering adapter ([`FilteringHandler`]).

use std::fmt;
use std::future::{Future, ready};
use std::sync::Arc;

pub use deltafifo::{DeletedFinalStateUnknown, DeletedObject};

/// Receives the changes an informer observes, after its cache has been updated.
///
/// Each method is awaited to completion before the next notification for the same handler is
/// delivered, so a handler sees its notifications one at a time and in order. A handler runs on
/// its own task with its own buffer: a slow handler delays nobody but itself. Default methods
/// ignore the notification.
///
/// Notifications describe transitions of the informer's cache, not raw watch verbs (client-go's
/// contract): a modification of an object the cache did not hold arrives as an add, and a relist
/// or resync that finds an object unchanged arrives as an update whose old and new objects have
/// the same `resourceVersion` (for a resync they are the same `Arc`).
///
/// Implement the trait with `async fn`s, or build one from closures with [`handler`].
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object appeared in the cache. `is_in_initial_list` is true for objects of the initial
    /// list (or, for a handler added to a running informer, of the cache snapshot it starts with).
    fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) -> impl Future<Output = ()> + Send {
        let _ = (obj, is_in_initial_list);
        ready(())
    }

    /// An object in the cache changed from `old` to `new`.
    fn on_update(&self, old: Arc<K>, new: Arc<K>) -> impl Future<Output = ()> + Send {
        let _ = (old, new);
        ready(())
    }

    /// An object left the cache: either its last state, or a tombstone for an object whose
    /// deletion was missed while the watch was down.
    fn on_delete(&self, obj: DeletedObject<K>) -> impl Future<Output = ()> + Send {
        let _ = obj;
        ready(())
    }

    /// The handler's name in logs (a panic in the handler is logged with it).
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

type AddFn<K> = Box<dyn Fn(Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(Arc<K>, Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(DeletedObject<K>) + Send + Sync>;

/// A handler made of synchronous closures (client-go's `ResourceEventHandlerDetailedFuncs`); a
/// missing closure ignores its notifications. Built with [`handler`].
///
/// The closures run on the handler's own task and should be quick (typically: enqueue a key). For
/// work that awaits, implement [`ResourceEventHandler`] instead.
pub struct HandlerFuncs<K> {
    name: String,
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

/// Starts a [`HandlerFuncs`]: `handler().on_add(|obj, initial| ..).on_delete(|obj| ..)`.
pub fn handler<K>() -> HandlerFuncs<K> {
    HandlerFuncs {
        name: "handler-funcs".to_owned(),
        add: None,
        update: None,
        delete: None,
    }
}

impl<K> HandlerFuncs<K> {
    /// Names the handler in logs.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Called for every add, with `is_in_initial_list`.
    pub fn on_add(mut self, f: impl Fn(Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Called for every update, with the old and the new object.
    pub fn on_update(mut self, f: impl Fn(Arc<K>, Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Called for every delete, with the last state or a tombstone.
    pub fn on_delete(mut self, f: impl Fn(DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K> fmt::Debug for HandlerFuncs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerFuncs")
            .field("name", &self.name)
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for HandlerFuncs<K> {
    fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) -> impl Future<Output = ()> + Send {
        if let Some(add) = &self.add {
            add(obj, is_in_initial_list);
        }
        ready(())
    }

    fn on_update(&self, old: Arc<K>, new: Arc<K>) -> impl Future<Output = ()> + Send {
        if let Some(update) = &self.update {
            update(old, new);
        }
        ready(())
    }

    fn on_delete(&self, obj: DeletedObject<K>) -> impl Future<Output = ()> + Send {
        if let Some(delete) = &self.delete {
            delete(obj);
        }
        ready(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Passes to `inner` only what concerns objects that `filter` accepts (client-go's
/// `FilteringResourceEventHandler`).
///
/// Adds and deletes pass when the object passes. An update is mapped by which side passes:
/// both → update; only the new object → add (`is_in_initial_list = false`); only the old object
/// → delete of the old object; neither → nothing. A tombstone is filtered on its last known
/// state; a tombstone without one always passes (there is nothing to judge it by).
pub struct FilteringHandler<F, H> {
    filter: F,
    inner: H,
}

impl<F, H> FilteringHandler<F, H> {
    /// Wraps `inner` behind `filter`.
    pub fn new(filter: F, inner: H) -> Self {
        Self { filter, inner }
    }
}

impl<F, H: fmt::Debug> fmt::Debug for FilteringHandler<F, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteringHandler")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<K, F, H> ResourceEventHandler<K> for FilteringHandler<F, H>
where
    K: Send + Sync + 'static,
    F: Fn(&K) -> bool + Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    async fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(&obj) {
            self.inner.on_add(obj, is_in_initial_list).await;
        }
    }

    async fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        match ((self.filter)(&old), (self.filter)(&new)) {
            (true, true) => self.inner.on_update(old, new).await,
            (false, true) => self.inner.on_add(new, false).await,
            (true, false) => self.inner.on_delete(DeletedObject::Known(old)).await,
            (false, false) => {}
        }
    }

    async fn on_delete(&self, obj: DeletedObject<K>) {
        if obj.object().is_none_or(|last| (self.filter)(last)) {
            self.inner.on_delete(obj).await;
        }
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Event, Recorder, cm};
    use k8s_openapi::api::core::v1::ConfigMap;

    fn kept(obj: &ConfigMap) -> bool {
        obj.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("keep"))
    }

    #[tokio::test]
    async fn filtering_maps_updates_by_which_side_passes() {
        let inner = Recorder::new("inner");
        let filtered = FilteringHandler::new(kept, inner.clone());
        filtered.on_add(cm("keep-a", "1"), true).await;
        filtered.on_add(cm("drop-a", "1"), true).await;
        // Both pass: an update. Only the new one: an add. Only the old one: a delete. Neither: nothing.
        filtered
            .on_update(cm("keep-a", "1"), cm("keep-a", "2"))
            .await;
        filtered
            .on_update(cm("drop-b", "1"), cm("keep-b", "2"))
            .await;
        filtered
            .on_update(cm("keep-c", "1"), cm("drop-c", "2"))
            .await;
        filtered
            .on_update(cm("drop-d", "1"), cm("drop-d", "2"))
            .await;
        filtered
            .on_delete(DeletedObject::Known(cm("drop-e", "1")))
            .await;
        filtered
            .on_delete(DeletedObject::Known(cm("keep-e", "1")))
            .await;
        let key: indexer::ObjectKey = "default/x".parse().unwrap();
        let bare = DeletedFinalStateUnknown { key, obj: None };
        filtered
            .on_delete(DeletedObject::Unknown(Box::new(bare)))
            .await;
        assert_eq!(
            inner.events(),
            vec![
                Event::Add("keep-a".into(), "1".into(), true),
                Event::Update("keep-a".into(), "1".into(), "2".into(), false),
                Event::Add("keep-b".into(), "2".into(), false),
                Event::Delete("keep-c".into(), Some("1".into()), false),
                Event::Delete("keep-e".into(), Some("1".into()), false),
                Event::Delete("x".into(), None, true),
            ]
        );
        assert_eq!(ResourceEventHandler::<ConfigMap>::name(&filtered), "inner");
    }

    #[tokio::test]
    async fn closures_receive_their_notifications_and_missing_ones_ignore_them() {
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let funcs = {
            let (add, delete) = (seen.clone(), seen.clone());
            handler()
                .named("funcs")
                .on_add(move |obj: Arc<ConfigMap>, initial| {
                    add.lock()
                        .push(format!("add {:?} {initial}", obj.metadata.name));
                })
                .on_delete(move |obj| delete.lock().push(format!("delete {}", obj.is_tombstone())))
        };
        // The builder's methods shadow the trait's, so call the trait's by path.
        ResourceEventHandler::on_add(&funcs, cm("a", "1"), false).await;
        ResourceEventHandler::on_update(&funcs, cm("a", "1"), cm("a", "2")).await;
        ResourceEventHandler::on_delete(&funcs, DeletedObject::Known(cm("a", "2"))).await;
        assert_eq!(*seen.lock(), ["add Some(\"a\") false", "delete false"]);
        assert_eq!(ResourceEventHandler::<ConfigMap>::name(&funcs), "funcs");
    }
}
