//! [`CacheLister`] and [`NamespacedCacheLister`]: reads of one kind from the manager's cache,
//! as one cache however many namespaces (and watches) it spans.

use std::fmt;
use std::sync::Arc;

use indexer::compact::Compact;
use indexer::{Lister, ObjectKey, key_of};
use informer::{Object, SharedIndexInformer};
use kube::core::Selector;

use crate::cache::error::Error;
use crate::cache::kind_cache::KindCache;

/// Reads one kind from the manager's cache (never from the API server): by label selector,
/// by namespace, by name and by [field index](crate::cache::Cache::index_field). Cheap to clone;
/// from [`Cache::lister`](crate::cache::Cache::lister) or
/// [`Context::lister`](crate::controller::Context::lister).
///
/// When the manager caches the kind in a set of namespaces, reads span exactly those; reading
/// another namespace is [`Error::NamespaceNotCached`], not an empty answer.
pub struct CacheLister<K: Object> {
    cache: Arc<KindCache<K>>,
}

impl<K: Object> Clone for CacheLister<K> {
    fn clone(&self) -> Self {
        Self {
            cache: Arc::clone(&self.cache),
        }
    }
}

impl<K: Object> fmt::Debug for CacheLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheLister")
            .field("kind", &self.cache.kind())
            .field("namespaces", &self.cache.namespaces())
            .finish()
    }
}

impl<K: Object> CacheLister<K> {
    pub(crate) fn new(cache: Arc<KindCache<K>>) -> Self {
        Self { cache }
    }

    /// Every cached object whose labels match `selector` (`Selector::default()`: all), in every
    /// cached namespace.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.cache.list(selector)
    }

    /// The cluster-scoped object called `name`, if cached.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let key = ObjectKey::cluster_scoped(name).ok()?;
        self.cache.get(&key).ok().flatten()
    }

    /// The cached object with `key`; [`Error::NamespaceNotCached`] if the cache does not cover
    /// its namespace.
    pub fn get_by_key(&self, key: &ObjectKey) -> Result<Option<Arc<K>>, Error> {
        self.cache.get(key)
    }

    /// Reads limited to `namespace` (`""`: every cached namespace, as in client-go).
    pub fn namespace(&self, namespace: &str) -> NamespacedCacheLister<K> {
        NamespacedCacheLister {
            cache: Arc::clone(&self.cache),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects, in every cached namespace, whose field index `index` (registered with
    /// [`Cache::index_field`](crate::cache::Cache::index_field)) holds `value`
    /// (controller-runtime's `MatchingFields`). [`Error::UnknownFieldIndex`] if no such index
    /// was registered for this kind.
    pub fn by_field(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.cache.by_field(index, value, None)
    }

    /// The keys of [`by_field`](Self::by_field)'s objects: what a `watches` mapper returns.
    pub fn keys_by_field(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, Error> {
        Ok(keys(self.by_field(index, value)?))
    }

    /// Whether every watch of the kind (one per cached namespace) holds its initial list.
    pub fn has_synced(&self) -> bool {
        self.cache.has_synced()
    }

    /// The namespaces the kind is cached in; `None` for all namespaces (or a cluster-scoped
    /// kind).
    pub fn namespaces(&self) -> Option<Vec<String>> {
        self.cache.namespaces()
    }

    /// How many objects are cached, in every namespace.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until every watch of the kind holds its initial list (at once if it does).
    pub async fn synced(&self) {
        self.cache.synced().await;
    }

    /// The informers behind this cache, one per cached namespace or a single one: for adding
    /// event handlers or reading their statistics. Unlike
    /// [`Cache::informers`](crate::cache::Cache::informers), this does not keep the cache for
    /// the manager's lifetime. [`Error::CompactStorage`] when the kind is kept
    /// [compact](crate::cache::Storage) (see [`compact_informers`](Self::compact_informers)).
    pub fn informers(&self) -> Result<&[Arc<SharedIndexInformer<K>>], Error> {
        self.cache.informers()
    }

    /// The informers behind a cache kept [compact](crate::cache::Storage), whose objects are
    /// [`Compact<K>`]; empty when the kind is kept typed.
    pub fn compact_informers(&self) -> Vec<Arc<SharedIndexInformer<Compact<K>>>> {
        self.cache.compact_informers()
    }

    /// Whether the kind's objects are kept [compact](crate::cache::Storage).
    pub fn is_compact(&self) -> bool {
        self.cache.is_compact()
    }

    /// The informer-level [`Lister`] that holds `namespace`'s objects (`None`: the single
    /// informer of a kind cached across all namespaces or cluster-wide), for code written
    /// against `indexer::Lister`. With several namespaces cached, each has its own.
    /// [`Error::CompactStorage`] when the kind is kept compact.
    pub fn informer_lister(&self, namespace: Option<&str>) -> Result<Lister<K>, Error> {
        Ok(self.cache.informer_for(namespace)?.lister())
    }
}

/// Reads of one kind limited to one namespace; from [`CacheLister::namespace`]. Each read fails
/// with [`Error::NamespaceNotCached`] if the manager does not cache that namespace.
pub struct NamespacedCacheLister<K: Object> {
    cache: Arc<KindCache<K>>,
    namespace: String,
}

impl<K: Object> fmt::Debug for NamespacedCacheLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespacedCacheLister")
            .field("kind", &self.cache.kind())
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Object> NamespacedCacheLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The objects in this namespace whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Result<Vec<Arc<K>>, Error> {
        self.cache.list_namespace(&self.namespace, selector)
    }

    /// The object called `name` in this namespace, if cached.
    pub fn get(&self, name: &str) -> Result<Option<Arc<K>>, Error> {
        match ObjectKey::new(Some(&self.namespace), name) {
            Ok(key) => self.cache.get(&key),
            Err(_) => Ok(None),
        }
    }

    /// The objects in this namespace whose field index `index` holds `value`.
    pub fn by_field(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        let namespace = Some(self.namespace.as_str()).filter(|ns| !ns.is_empty());
        self.cache.by_field(index, value, namespace)
    }

    /// The keys of [`by_field`](Self::by_field)'s objects: what a `watches` mapper returns.
    pub fn keys_by_field(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, Error> {
        Ok(keys(self.by_field(index, value)?))
    }
}

/// The keys of `objects` (objects without a name, which a cache never holds, are skipped).
fn keys<K: Object>(objects: Vec<Arc<K>>) -> Vec<ObjectKey> {
    objects
        .iter()
        .filter_map(|obj| key_of(obj.as_ref()).ok())
        .collect()
}
