//! The `Store` trait that the reflector writes into, and the `KnownObjects` read view.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Error, ObjectKey, ObjectKeyRef};

/// What [`Store::backpressure`] asks a producer to await before its next write.
pub type Backpressure<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A keyed collection of objects that a reflector keeps in step with the API server.
///
/// Mirrors client-go's `cache.Store`. Implemented by [`Indexer`](crate::Indexer) (a cache) and by
/// `deltafifo::DeltaFifo` (a queue of changes). The trait is synchronous and object-safe, so a
/// reflector can write into a `Box<dyn Store<K>>` chosen at run time.
///
/// Objects are shared as `Arc<K>` and must be treated as read-only once stored.
pub trait Store<K>: Send + Sync {
    /// Inserts an object that the server reports as newly created.
    fn add(&self, obj: Arc<K>) -> Result<(), Error>;

    /// Records a new state of an object.
    fn update(&self, obj: Arc<K>) -> Result<(), Error>;

    /// Records that an object is gone; `obj` is its last known state.
    fn delete(&self, obj: Arc<K>) -> Result<(), Error>;

    /// Replaces the whole content with `objects`, the result of a fresh list at `resource_version`.
    ///
    /// Fails without changing anything when an object cannot be keyed.
    fn replace(&self, objects: Vec<Arc<K>>, resource_version: String) -> Result<(), Error>;

    /// Starts a replace whose list arrives in pages: each page goes to
    /// [`ReplaceInPages::page`], then [`ReplaceInPages::finish`] ends it with the list's
    /// resource version, exactly as one [`replace`](Self::replace) with every page would.
    ///
    /// Dropping the returned session without `finish` abandons the replace (the list failed
    /// part-way): the store deletes nothing because of it and stays usable; the next complete
    /// replace brings it in line with the server. Pages given to the abandoned session may
    /// already be visible (a store that applies them as they come) or not (one that collects
    /// them, like this default, which calls `replace` once at `finish`).
    ///
    /// Override it when the store can apply pages as they arrive, so the old and the new list
    /// need not be held at once (`deltafifo::DeltaFifo` does).
    fn replace_in_pages(&self) -> Box<dyn ReplaceInPages<K> + '_>
    where
        K: Send + Sync + 'static,
    {
        Box::new(CollectPages {
            objects: Vec::new(),
            replace: move |objects, resource_version| self.replace(objects, resource_version),
        })
    }

    /// Asks the store to re-deliver its known objects; a no-op for plain caches.
    fn resync(&self) -> Result<(), Error>;

    /// Whether the producer should wait before its next write: `None` (the default) when the
    /// store takes writes now; else a future that resolves once it has room. A store whose
    /// consumer can fall behind (a bounded `deltafifo::DeltaFifo`) returns one while its backlog
    /// is over its bound; a reflector awaits it before it reads the next watch event, so the
    /// server's stream waits instead of the store growing. Writes are never refused either way.
    fn backpressure(&self) -> Option<Backpressure<'_>> {
        None
    }

    /// The object stored under `key`, if any.
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>>;

    /// Every stored object, in no particular order.
    fn list(&self) -> Vec<Arc<K>>;

    /// Every stored key, in no particular order.
    fn list_keys(&self) -> Vec<ObjectKey>;
}

/// A replace in progress whose list arrives page by page; from [`Store::replace_in_pages`].
///
/// `Send`, so a reflector can hold it while it fetches the next page.
pub trait ReplaceInPages<K>: Send {
    /// Adds one page of the list. A store that applies pages as they come fails here when an
    /// object cannot be keyed, taking nothing of this page (earlier pages are unaffected, and
    /// the session can still be finished or dropped); one that collects them reports it at
    /// [`finish`](Self::finish).
    fn page(&mut self, objects: Vec<Arc<K>>) -> Result<(), Error>;

    /// Ends the replace: the store now holds exactly the objects of every page, the list at
    /// `resource_version`; whatever it held that no page contained is deleted.
    fn finish(self: Box<Self>, resource_version: String) -> Result<(), Error>;
}

/// The default [`ReplaceInPages`]: collects the pages and replaces once at the end.
struct CollectPages<K, F> {
    objects: Vec<Arc<K>>,
    replace: F,
}

impl<K, F> ReplaceInPages<K> for CollectPages<K, F>
where
    K: Send + Sync,
    F: FnOnce(Vec<Arc<K>>, String) -> Result<(), Error> + Send,
{
    fn page(&mut self, objects: Vec<Arc<K>>) -> Result<(), Error> {
        if self.objects.is_empty() {
            self.objects = objects;
        } else {
            self.objects.extend(objects);
        }
        Ok(())
    }

    fn finish(self: Box<Self>, resource_version: String) -> Result<(), Error> {
        (self.replace)(self.objects, resource_version)
    }
}

/// A read-only view of the objects a consumer already knows about.
///
/// `deltafifo` uses it on a relist to find objects that vanished while the watch was down (and to
/// resync): in an informer, the known objects are the informer's [`Indexer`](crate::Indexer).
pub trait KnownObjects<K>: Send + Sync {
    /// Every known key, in no particular order.
    fn known_keys(&self) -> Vec<ObjectKey>;

    /// The known object stored under `key`, if any.
    fn known_object(&self, key: ObjectKeyRef<'_>) -> Option<Arc<K>>;
}
