//! [`Indexer`]: the thread-safe cache with named indices.

use std::fmt;
use std::sync::Arc;

use kube::Resource;
use parking_lot::RwLock;

use crate::thread_safe_store::{Contents, Slot};
use crate::{Error, Indexers, KnownObjects, ObjectKey, ObjectKeyRef, Store, key_of};

/// A thread-safe cache of objects keyed by [`ObjectKey`], with named indices (client-go's
/// `cache.Indexer` over a `ThreadSafeStore`).
///
/// `Indexer` is a handle: clones share one cache. Objects are stored as `Arc<K>` and handed out as
/// `Arc` clones, never deep-cloned; treat them as read-only. Indices are maintained incrementally on
/// every write (an update that moves an object to another index value removes it from the old
/// value; values with no objects left are dropped) and rebuilt on [`Store::replace`].
///
/// Writes go through the [`Store`] trait; reads are the inherent methods below, and
/// [`Lister`](crate::Lister) adds namespace and label-selector reads.
pub struct Indexer<K> {
    contents: Arc<RwLock<Contents<K>>>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Self {
            contents: Arc::clone(&self.contents),
        }
    }
}

impl<K> fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let contents = self.contents.read();
        f.debug_struct("Indexer")
            .field("len", &contents.len())
            .field("indices", &contents.index_names().collect::<Vec<_>>())
            .finish()
    }
}

impl<K> Default for Indexer<K> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<K> Indexer<K> {
    /// An empty cache that maintains `indexers`.
    pub fn new(indexers: Indexers<K>) -> Self {
        Self {
            contents: Arc::new(RwLock::new(Contents::new(indexers.into_inner()))),
        }
    }

    /// Registers more indices and builds them from the objects already stored.
    ///
    /// Works at any time, before or after objects arrive (as client-go does since 1.30). Fails
    /// without registering anything when one of the names is already registered.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.contents.write().add_indexers(indexers.into_inner())
    }

    /// The names of the registered indices.
    pub fn index_names(&self) -> Vec<String> {
        self.contents
            .read()
            .index_names()
            .map(str::to_owned)
            .collect()
    }

    /// The object stored under `key`, if any.
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.contents.read().get(key.as_key_ref()).cloned()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        let contents = self.contents.read();
        contents.slots().map(|slot| Arc::clone(&slot.obj)).collect()
    }

    /// Every stored key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        let contents = self.contents.read();
        contents.slots().map(|slot| slot.key.clone()).collect()
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.contents.read().len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The objects indexed under `value` in index `name`; empty for a value nobody has.
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        let contents = self.contents.read();
        let mut out = Vec::with_capacity(contents.count_indexed(name, value)?);
        contents.for_each_indexed(name, value, |slot| out.push(Arc::clone(&slot.obj)))?;
        Ok(out)
    }

    /// The keys indexed under `value` in index `name`, sorted.
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<ObjectKey>, Error> {
        let mut keys = {
            let contents = self.contents.read();
            let mut keys = Vec::with_capacity(contents.count_indexed(name, value)?);
            contents.for_each_indexed(name, value, |slot| keys.push(slot.key.clone()))?;
            keys
        };
        keys.sort_unstable();
        Ok(keys)
    }

    /// Every value under which index `name` currently holds at least one object, in no particular order.
    pub fn list_index_func_values(&self, name: &str) -> Result<Vec<String>, Error> {
        self.contents.read().values_of(name)
    }

    /// The stored objects that share at least one value of index `name` with `obj`, each once.
    pub fn index(&self, name: &str, obj: &K) -> Result<Vec<Arc<K>>, Error> {
        let contents = self.contents.read();
        let values = contents.index_values(name, obj)?;
        let mut seen = hashbrown::HashSet::new();
        let mut out = Vec::new();
        for value in &values {
            contents.for_each_indexed(name, value, |slot| {
                if values.len() == 1 || seen.insert(slot.key.clone()) {
                    out.push(Arc::clone(&slot.obj));
                }
            })?;
        }
        Ok(out)
    }

    /// Stores `obj` under `key`, which must be `obj`'s own key ([`key_of`]), and returns the
    /// object it replaces.
    ///
    /// For callers that already hold the key (an informer applying a popped delta, which also
    /// wants the previous object for its update notification): a new entry shares the caller's
    /// key instead of building its own. Otherwise the same as [`Store::add`].
    pub fn put(&self, key: &ObjectKey, obj: Arc<K>) -> Result<Option<Arc<K>>, Error> {
        self.contents.write().upsert_keyed(key, obj)
    }

    /// Removes the object stored under `key`; returns it if it was there.
    ///
    /// The informer uses this for deletions it only knows by key (tombstones).
    pub fn delete_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.contents.write().remove(key.as_key_ref())
    }

    /// Applies `writes` in order under one write lock: `(key, Some(obj))` stores `obj` under
    /// `key` (its own key, as for [`put`](Self::put)), `(key, None)` removes `key`. Returns, for
    /// each write, the object it replaced or removed, or the error of a store that failed (the
    /// other writes still apply).
    ///
    /// For a consumer applying a batch of changes at once (an informer popping a batch from its
    /// fifo): readers see the cache before or after the whole batch, and the lock is taken once.
    pub fn write_batch<'a>(
        &self,
        writes: impl IntoIterator<Item = (&'a ObjectKey, Option<Arc<K>>)>,
    ) -> Vec<Result<Option<Arc<K>>, Error>> {
        let writes = writes.into_iter();
        let mut previous = Vec::with_capacity(writes.size_hint().0);
        let mut contents = self.contents.write();
        for (key, obj) in writes {
            previous.push(match obj {
                Some(obj) => contents.upsert_keyed(key, obj),
                None => Ok(contents.remove(key.as_key_ref())),
            });
        }
        previous
    }

    /// Calls `visit` with every object indexed under `value` in index `name`, under the read lock.
    pub(crate) fn for_each_indexed(
        &self,
        name: &str,
        value: &str,
        mut visit: impl FnMut(&Arc<K>),
    ) -> Result<(), Error> {
        let contents = self.contents.read();
        contents.for_each_indexed(name, value, |slot: &Slot<K>| visit(&slot.obj))
    }

    /// Calls `visit` with every object, under the read lock.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(&Arc<K>)) {
        let contents = self.contents.read();
        contents.slots().for_each(|slot| visit(&slot.obj));
    }
}

impl<K: Resource> Indexer<K> {
    /// The stored object with the same key as `obj`, if any.
    pub fn get(&self, obj: &K) -> Result<Option<Arc<K>>, Error> {
        let key = ObjectKeyRef::of(obj)?;
        Ok(self.contents.read().get(key).cloned())
    }
}

impl<K: Resource + Send + Sync> Store<K> for Indexer<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        let replaced = self.contents.write().upsert(obj)?;
        // Released after unlocking: a last reference runs the object's destructor.
        drop(replaced);
        Ok(())
    }

    fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        self.add(obj)
    }

    fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        let key = ObjectKeyRef::of(obj.as_ref())?;
        let removed = self.contents.write().remove(key);
        drop(removed);
        Ok(())
    }

    fn replace(&self, objects: Vec<Arc<K>>, _resource_version: String) -> Result<(), Error> {
        let items = objects
            .into_iter()
            .map(|obj| Ok((key_of(obj.as_ref())?, obj)))
            .collect::<Result<Vec<_>, Error>>()?;
        let previous = self.contents.write().replace_all(items)?;
        drop(previous);
        Ok(())
    }

    fn resync(&self) -> Result<(), Error> {
        Ok(())
    }

    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }

    fn list(&self) -> Vec<Arc<K>> {
        Indexer::list(self)
    }

    fn list_keys(&self) -> Vec<ObjectKey> {
        Indexer::list_keys(self)
    }
}

impl<K: Send + Sync> KnownObjects<K> for Indexer<K> {
    fn known_keys(&self) -> Vec<ObjectKey> {
        self.list_keys()
    }

    fn known_object(&self, key: ObjectKeyRef<'_>) -> Option<Arc<K>> {
        self.contents.read().get(key).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NAMESPACE_INDEX;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::ObjectMeta;

    fn cm(ns: &str, name: &str, colors: &[&str]) -> Arc<ConfigMap> {
        let labels = colors
            .iter()
            .map(|c| (format!("color-{c}"), "true".to_string()))
            .collect();
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                labels: Some(labels),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        })
    }

    fn by_color() -> Indexers<ConfigMap> {
        Indexers::new().with("color", |o: &ConfigMap| {
            o.metadata
                .labels
                .iter()
                .flatten()
                .filter_map(|(k, _)| k.strip_prefix("color-").map(str::to_owned))
                .collect()
        })
    }

    #[test]
    fn update_moving_an_object_drops_the_empty_old_value() {
        let idx = Indexer::new(by_color());
        idx.add(cm("a", "x", &["red"])).unwrap();
        idx.update(cm("a", "x", &["blue"])).unwrap();
        assert_eq!(idx.list_index_func_values("color").unwrap(), ["blue"]);
        assert!(idx.by_index("color", "red").unwrap().is_empty());
    }

    #[test]
    fn delete_removes_the_object_from_every_value() {
        let idx = Indexer::new(by_color().with_namespace());
        idx.add(cm("a", "x", &["red", "blue"])).unwrap();
        idx.delete(cm("a", "x", &[])).unwrap();
        assert!(idx.list_index_func_values("color").unwrap().is_empty());
        assert!(idx.list_index_func_values("namespace").unwrap().is_empty());
        assert!(idx.is_empty());
    }

    #[test]
    fn a_batch_of_writes_applies_in_order_and_returns_what_each_replaced() {
        let idx = Indexer::new(by_color());
        idx.add(cm("a", "x", &["red"])).unwrap();
        let (x, y): (ObjectKey, ObjectKey) = ("a/x".parse().unwrap(), "a/y".parse().unwrap());
        let previous = idx.write_batch([
            (&x, Some(cm("a", "x", &["blue"]))),
            (&y, Some(cm("a", "y", &["red"]))),
            (&x, None),
            (&y, Some(cm("a", "y", &["green"]))),
        ]);
        let colors: Vec<Option<String>> = previous
            .into_iter()
            .map(|old| {
                let old = old.unwrap()?;
                old.metadata.labels.as_ref()?.keys().next().cloned()
            })
            .collect();
        assert_eq!(
            colors,
            [
                Some("color-red".into()),
                None,
                Some("color-blue".into()),
                Some("color-red".into())
            ]
        );
        assert_eq!(idx.list_keys(), [y]);
        assert_eq!(idx.list_index_func_values("color").unwrap(), ["green"]);
    }

    #[test]
    fn query_on_unknown_index_is_an_error() {
        let idx = Indexer::<ConfigMap>::new(Indexers::new());
        assert!(matches!(idx.by_index("nope", "v"), Err(Error::UnknownIndex(n)) if n == "nope"));
        assert!(idx.index("nope", &cm("a", "x", &[])).is_err());
    }

    #[test]
    fn add_indexers_builds_the_new_index_from_present_objects() {
        let idx = Indexer::new(Indexers::new());
        idx.add(cm("a", "x", &["red"])).unwrap();
        idx.add(cm("b", "y", &["red", "green"])).unwrap();
        idx.add_indexers(by_color()).unwrap();
        let keys: Vec<String> = idx
            .index_keys("color", "red")
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(keys, ["a/x", "b/y"]);
    }

    #[test]
    fn add_indexers_with_an_existing_name_fails_and_adds_nothing() {
        let idx = Indexer::new(by_color());
        let result = idx.add_indexers(
            Indexers::new()
                .with_namespace()
                .with("color", |_: &ConfigMap| vec![]),
        );
        assert!(matches!(result, Err(Error::IndexExists(n)) if n == "color"));
        assert_eq!(idx.index_names(), ["color"]);
    }

    #[test]
    fn index_returns_each_matching_object_once() {
        let idx = Indexer::new(by_color());
        idx.add(cm("a", "x", &["red", "blue"])).unwrap();
        idx.add(cm("a", "y", &["blue"])).unwrap();
        let found = idx
            .index("color", &cm("z", "probe", &["red", "blue"]))
            .unwrap();
        assert_eq!(found.len(), 2);
    }

    #[test]
    fn reads_share_the_stored_arc() {
        let idx = Indexer::new(Indexers::new().with_namespace());
        let obj = cm("a", "x", &[]);
        idx.add(Arc::clone(&obj)).unwrap();
        assert!(Arc::ptr_eq(&idx.list()[0], &obj));
        assert!(Arc::ptr_eq(
            &idx.by_index(NAMESPACE_INDEX, "a").unwrap()[0],
            &obj
        ));
    }

    #[test]
    fn delete_key_removes_by_key_alone() {
        let idx = Indexer::new(Indexers::new().with_namespace());
        idx.add(cm("a", "x", &[])).unwrap();
        let key = ObjectKey::namespaced("a", "x").unwrap();
        assert!(idx.delete_key(&key).is_some());
        assert!(idx.delete_key(&key).is_none());
        assert!(
            idx.list_index_func_values(NAMESPACE_INDEX)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn freed_slots_are_reused_without_mixing_up_objects() {
        let idx = Indexer::new(by_color());
        for i in 0..10 {
            idx.add(cm("a", &format!("o{i}"), &["red"])).unwrap();
        }
        for i in 0..5 {
            idx.delete(cm("a", &format!("o{i}"), &[])).unwrap();
        }
        for i in 10..15 {
            idx.add(cm("a", &format!("o{i}"), &["blue"])).unwrap();
        }
        assert_eq!(idx.len(), 10);
        assert_eq!(idx.by_index("color", "red").unwrap().len(), 5);
        let blue: Vec<String> = idx
            .index_keys("color", "blue")
            .unwrap()
            .iter()
            .map(|k| k.name().to_owned())
            .collect();
        assert_eq!(blue, ["o10", "o11", "o12", "o13", "o14"]);
    }

    #[test]
    fn a_replace_in_pages_applies_at_finish_and_an_abandoned_one_changes_nothing() {
        let cache = Indexer::new(Indexers::new().with_namespace());
        cache.add(cm("a", "old", &[])).unwrap();

        let mut abandoned = cache.replace_in_pages();
        abandoned.page(vec![cm("a", "x", &[])]).unwrap();
        drop(abandoned);
        assert_eq!(cache.list_keys(), ["a/old".parse().unwrap()]);

        let mut replace = cache.replace_in_pages();
        replace.page(vec![cm("a", "one", &[])]).unwrap();
        replace.page(vec![cm("b", "two", &[])]).unwrap();
        assert!(
            cache.get_by_key(&"a/one".parse().unwrap()).is_none(),
            "collected until finish"
        );
        replace.finish("5".into()).unwrap();
        let mut keys: Vec<String> = cache.list_keys().iter().map(ToString::to_string).collect();
        keys.sort();
        assert_eq!(keys, ["a/one", "b/two"]);
        assert_eq!(cache.by_index(NAMESPACE_INDEX, "a").unwrap().len(), 1);
    }
}
