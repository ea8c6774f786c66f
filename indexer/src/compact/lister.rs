//! [`CompactLister`]: typed reads of a cache of compact objects.

use std::sync::Arc;

use kube::Resource;
use kube::core::Selector;
use serde::de::DeserializeOwned;

use super::{Compact, RecentlyDecoded};
use crate::{Error, Indexer, Lister, ObjectKey, ObjectKeyRef};

/// Reads an [`Indexer`] of [`Compact`] objects as typed `Arc<K>`, the way a [`Lister`] reads a
/// typed cache: by name, by namespace, by label selector and by index.
///
/// Selection runs on the lean metadata (labels, namespace, keys, index values), so only the
/// objects a read returns are decoded. An object whose body does not decode into `K` is logged
/// and left out, as the typed mode's reflector would have left it out of the cache. With
/// [`recently_decoded`](Self::recently_decoded), a read of an object decoded recently at the
/// same resourceVersion is served without decoding.
///
/// ```
/// use std::sync::Arc;
/// use indexer::compact::{Compact, CompactLister};
/// use indexer::{Indexer, Indexers, Store};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::core::{Expression, Selector};
///
/// # fn main() -> Result<(), indexer::Error> {
/// let cache: Indexer<Compact<ConfigMap>> = Indexer::new(Indexers::new().with_namespace());
/// for (name, app) in [("a", "web"), ("b", "db")] {
///     let json = format!(r#"{{"metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"1","labels":{{"app":"{app}"}}}},"data":{{"k":"{name}"}}}}"#);
///     cache.add(Arc::new(serde_json::from_str(&json).unwrap()))?;
/// }
/// let lister = CompactLister::new(cache).recently_decoded(100);
/// let web: Selector = Expression::Equal("app".into(), "web".into()).into();
/// let found = lister.namespace("ns").list(&web);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].data.as_ref().unwrap()["k"], "a");
/// assert!(Arc::ptr_eq(&found[0], &lister.namespace("ns").get("a").unwrap()));
/// # Ok(())
/// # }
/// ```
pub struct CompactLister<K> {
    lister: Lister<Compact<K>>,
    recent: Option<Arc<RecentlyDecoded<K>>>,
}

impl<K> Clone for CompactLister<K> {
    fn clone(&self) -> Self {
        Self {
            lister: self.lister.clone(),
            recent: self.recent.clone(),
        }
    }
}

impl<K: Resource + DeserializeOwned> CompactLister<K> {
    /// A lister reading from `indexer`, decoding every read.
    pub fn new(indexer: Indexer<Compact<K>>) -> Self {
        Self {
            lister: Lister::new(indexer),
            recent: None,
        }
    }

    /// Keeps up to `capacity` recently decoded objects and serves reads from them
    /// ([`RecentlyDecoded`]); clones of this lister share the set.
    pub fn recently_decoded(mut self, capacity: usize) -> Self {
        self.recent = Some(Arc::new(RecentlyDecoded::new(capacity)));
        self
    }

    /// Serves reads through `recent`, a set of recently decoded objects shared with other
    /// listers (say, those of one kind's caches in several namespaces) and with whatever else
    /// decodes the kind's objects through [`decode`](Self::decode).
    pub fn shared_recently_decoded(mut self, recent: Arc<RecentlyDecoded<K>>) -> Self {
        self.recent = Some(recent);
        self
    }

    /// The indexer this lister reads.
    pub fn indexer(&self) -> &Indexer<Compact<K>> {
        self.lister.indexer()
    }

    /// The object stored under `key`, decoded.
    pub fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let stored = self.indexer().get_by_key(key)?;
        self.read(Some(key), &stored)
    }

    /// The cluster-scoped object called `name`, decoded.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let stored = self.lister.get(name)?;
        self.read(None, &stored)
    }

    /// Every object, in any namespace, whose labels match `selector`, decoded.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.read_all(self.lister.list(selector))
    }

    /// The objects indexed under `value` in index `name`, decoded.
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        Ok(self.read_all(self.indexer().by_index(name, value)?))
    }

    /// Reads limited to `namespace`. An empty namespace means all namespaces.
    pub fn namespace(&self, namespace: &str) -> CompactNamespaceLister<K> {
        CompactNamespaceLister {
            lister: self.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The typed object of `stored` (an object of this lister's cache, or of an event of its
    /// informer), decoded as this lister's reads are: through the recently decoded objects if
    /// the lister has them. `None`, logged, when the body does not decode into `K`.
    pub fn decode(&self, stored: &Compact<K>) -> Option<Arc<K>> {
        self.read(None, stored)
    }

    fn read_all(&self, stored: Vec<Arc<Compact<K>>>) -> Vec<Arc<K>> {
        stored
            .iter()
            .filter_map(|obj| self.read(None, obj))
            .collect()
    }

    /// The typed object of `stored` (whose key is `key` when the caller has it): the one it
    /// decoded already, or a recently decoded one of the same version, or decoded now.
    fn read(&self, key: Option<&ObjectKey>, stored: &Compact<K>) -> Option<Arc<K>> {
        if let Some(decoded) = stored.decoded() {
            return Some(Arc::clone(decoded));
        }
        let recent = self.recent.as_deref().and_then(|recent| {
            let version = stored.meta().resource_version.as_deref()?;
            let key = match key {
                Some(key) => key.clone(),
                None => ObjectKeyRef::of(stored).ok()?.to_owned().ok()?,
            };
            Some((recent, key, version))
        });
        if let Some((recent, key, version)) = &recent
            && let Some(hit) = recent.get(key, version)
        {
            return Some(hit);
        }
        match stored.decode_fresh() {
            Ok(obj) => {
                let obj = Arc::new(obj);
                if let Some((recent, key, version)) = recent {
                    recent.insert(&key, version, Arc::clone(&obj));
                }
                Some(obj)
            }
            Err(error) => {
                tracing::warn!(
                    kind = std::any::type_name::<K>(),
                    namespace = ?stored.meta().namespace,
                    name = ?stored.meta().name,
                    %error,
                    "a cached object does not decode; leaving it out of the read"
                );
                None
            }
        }
    }
}

/// Reads limited to one namespace, from [`CompactLister::namespace`].
pub struct CompactNamespaceLister<K> {
    lister: CompactLister<K>,
    namespace: String,
}

impl<K: Resource + DeserializeOwned> CompactNamespaceLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The objects in this namespace whose labels match `selector`, decoded.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let stored = self.lister.lister.namespace(&self.namespace).list(selector);
        self.lister.read_all(stored)
    }

    /// The object called `name` in this namespace, decoded.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let key = ObjectKey::new(Some(&self.namespace), name).ok()?;
        self.lister.get_by_key(&key)
    }
}
