//! [`ResourceEventHandler`]: what an informer tells its consumers, plus a closure builder
//! ([`handler`]).

use std::fmt;
use std::future::{Future, ready};
use std::sync::Arc;

use futures::future::Either;

pub use deltafifo::{DeletedFinalStateUnknown, DeletedObject};

use crate::event::{Change, Event};

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
/// The informer tells a handler each change through [`on_event`](Self::on_event), with the
/// object's key and, for an update, whether it is a resync; its default hands the change on to
/// `on_add`, `on_update` or `on_delete`. Implement those three, or `on_event` alone when the key
/// or the resync flag is what the handler wants (a handler that enqueues keys need not compute
/// them again).
///
/// Implement the trait with `async fn`s, or build one from closures with [`handler`].
///
/// ```
/// use std::sync::Arc;
///
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use informer::{Change, Event, ObjectKey, ResourceEventHandler};
/// use tokio::sync::mpsc;
///
/// /// Sends the key of every change but resyncs to a work queue.
/// struct EnqueueKeys(mpsc::UnboundedSender<ObjectKey>);
///
/// impl ResourceEventHandler<ConfigMap> for EnqueueKeys {
///     async fn on_event(&self, event: Event<ConfigMap>) {
///         if !event.is_resync() {
///             let _ = self.0.send(event.key);
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (tx, mut rx) = mpsc::unbounded_channel();
/// let handler = EnqueueKeys(tx);
/// let key: ObjectKey = "default/settings".parse()?;
/// let cm = Arc::new(ConfigMap::default());
/// handler.on_event(Event::added(key.clone(), cm.clone(), true)).await;
/// handler.on_event(Event::updated(key.clone(), cm.clone(), cm, true)).await;
/// assert_eq!(rx.try_recv()?, key);
/// assert!(rx.try_recv().is_err(), "the resync was not enqueued");
/// # Ok(())
/// # }
/// ```
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// A change of the informer's cache, with the object's key. The default hands the change
    /// to [`on_add`](Self::on_add), [`on_update`](Self::on_update) or
    /// [`on_delete`](Self::on_delete).
    fn on_event(&self, event: Event<K>) -> impl Future<Output = ()> + Send {
        dispatch(self, event.change)
    }

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

/// Hands `change` to the method of `handler` that takes it.
pub(crate) fn dispatch<K, H>(handler: &H, change: Change<K>) -> impl Future<Output = ()> + Send
where
    H: ResourceEventHandler<K> + ?Sized,
{
    match change {
        Change::Added {
            object,
            in_initial_list,
        } => Either::Left(handler.on_add(object, in_initial_list)),
        Change::Updated { old, new, .. } => {
            Either::Right(Either::Left(handler.on_update(old, new)))
        }
        Change::Deleted(deleted) => Either::Right(Either::Right(handler.on_delete(deleted))),
    }
}

type EventFn<K> = Box<dyn Fn(Event<K>) + Send + Sync>;
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
    event: Option<EventFn<K>>,
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

/// Starts a [`HandlerFuncs`]: `handler().on_add(|obj, initial| ..).on_delete(|obj| ..)`.
pub fn handler<K>() -> HandlerFuncs<K> {
    HandlerFuncs {
        name: "handler-funcs".to_owned(),
        event: None,
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

    /// Called for every event, with the object's key (see [`Event`]); when set, the closures of
    /// `on_add`, `on_update` and `on_delete` are not called.
    pub fn on_event(mut self, f: impl Fn(Event<K>) + Send + Sync + 'static) -> Self {
        self.event = Some(Box::new(f));
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
            .field("event", &self.event.is_some())
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for HandlerFuncs<K> {
    fn on_event(&self, event: Event<K>) -> impl Future<Output = ()> + Send {
        match &self.event {
            Some(on_event) => {
                on_event(event);
                Either::Left(ready(()))
            }
            None => Either::Right(dispatch(self, event.change)),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::cm;
    use indexer::ObjectKey;
    use k8s_openapi::api::core::v1::ConfigMap;
    use parking_lot::Mutex;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::namespaced("default", name).unwrap()
    }

    #[tokio::test]
    async fn closures_receive_their_notifications_and_missing_ones_ignore_them() {
        let seen = Arc::new(Mutex::new(Vec::new()));
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

    /// Without `on_event` the closures get the changes; with it, it gets every event alone.
    #[tokio::test]
    async fn an_event_closure_takes_every_event_from_the_others() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let per_kind = {
            let (add, update) = (seen.clone(), seen.clone());
            handler()
                .on_add(move |_: Arc<ConfigMap>, initial| add.lock().push(format!("add {initial}")))
                .on_update(move |_, _| update.lock().push("update".to_owned()))
        };
        ResourceEventHandler::on_event(&per_kind, Event::added(key("a"), cm("a", "1"), false))
            .await;
        ResourceEventHandler::on_event(
            &per_kind,
            Event::updated(key("a"), cm("a", "1"), cm("a", "2"), false),
        )
        .await;
        assert_eq!(*seen.lock(), ["add false", "update"]);

        let events = Arc::new(Mutex::new(Vec::new()));
        let all = {
            let (events, add) = (events.clone(), seen.clone());
            handler()
                .on_add(move |_: Arc<ConfigMap>, _| add.lock().push("not called".to_owned()))
                .on_event(move |event| events.lock().push(event.key))
        };
        ResourceEventHandler::on_event(&all, Event::added(key("b"), cm("b", "1"), false)).await;
        assert_eq!(*events.lock(), [key("b")]);
        assert_eq!(seen.lock().len(), 2);
    }
}
