//! The `Store` trait that the reflector writes into, and the `KnownObjects` read view.

use std::sync::Arc;

use crate::{Error, ObjectKey, ObjectKeyRef};

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

    /// Asks the store to re-deliver its known objects; a no-op for plain caches.
    fn resync(&self) -> Result<(), Error>;

    /// The object stored under `key`, if any.
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>>;

    /// Every stored object, in no particular order.
    fn list(&self) -> Vec<Arc<K>>;

    /// Every stored key, in no particular order.
    fn list_keys(&self) -> Vec<ObjectKey>;
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
