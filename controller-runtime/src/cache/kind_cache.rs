//! [`KindCache`]: the manager's one logical cache of a kind — one informer across all
//! namespaces (or cluster-wide), or one informer per cached namespace — read, indexed and
//! synced as a single cache.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::future::join_all;
use indexer::compact::Compact;
use indexer::{IndexFn, Indexers, ObjectKey};
use informer::{InformerFactory, Object, SharedIndexInformer};
use kube::core::Selector;
use parking_lot::Mutex;

use crate::cache::error::Error;
use crate::cache::field_index::{index_fn, index_name, lookup_value};
use crate::cache::options::Namespaces;
use crate::cache::storage::{CompactInformer, Informers};
use crate::ops::metrics::InformerSet;

/// One kind's cache: its informers (one per namespace, or one for all) in the kind's storage,
/// its field indexes, and who uses it: the controllers watching it, and whether anything else
/// asked for it (a field index, `Manager::informer`, a lazy read), which keeps it for the
/// manager's lifetime.
pub(crate) struct KindCache<K: Object> {
    kind: String,
    namespaces: Namespaces,
    /// With [`Namespaces::Only`], one informer per namespace, in the set's order; otherwise one.
    informers: Informers<K>,
    field_indexes: Mutex<BTreeSet<String>>,
    controllers: AtomicUsize,
    pinned: AtomicBool,
}

impl<K: Object> KindCache<K> {
    /// A cache of `kind` over `informers` (see the field's contract).
    pub(crate) fn new(kind: String, namespaces: Namespaces, informers: Informers<K>) -> Self {
        Self {
            kind,
            namespaces,
            informers,
            field_indexes: Mutex::new(BTreeSet::new()),
            controllers: AtomicUsize::new(0),
            pinned: AtomicBool::new(false),
        }
    }

    /// The kind's name in messages, e.g. `ConfigMap (v1)`.
    pub(crate) fn kind(&self) -> &str {
        &self.kind
    }

    /// The informers in the kind's storage.
    pub(crate) fn storage(&self) -> &Informers<K> {
        &self.informers
    }

    /// Whether the kind's objects are kept compact.
    pub(crate) fn is_compact(&self) -> bool {
        matches!(self.informers, Informers::Compact(_))
    }

    /// The typed informers, one per cached namespace or a single one;
    /// [`Error::CompactStorage`] when the kind is kept compact.
    pub(crate) fn informers(&self) -> Result<&[Arc<SharedIndexInformer<K>>], Error> {
        match &self.informers {
            Informers::Typed(informers) => Ok(informers),
            Informers::Compact(_) => Err(Error::CompactStorage(self.kind.clone())),
        }
    }

    /// The informers of a compact cache (empty for a typed one).
    pub(crate) fn compact_informers(&self) -> Vec<Arc<SharedIndexInformer<Compact<K>>>> {
        match &self.informers {
            Informers::Typed(_) => Vec::new(),
            Informers::Compact(informers) => informers
                .iter()
                .map(|compact| Arc::clone(&compact.informer))
                .collect(),
        }
    }

    /// The cached namespaces; `None` when the kind is cached in all namespaces (or is
    /// cluster-scoped).
    pub(crate) fn namespaces(&self) -> Option<Vec<String>> {
        self.namespaces.to_list()
    }

    /// Whether every informer holds its initial list.
    pub(crate) fn has_synced(&self) -> bool {
        match &self.informers {
            Informers::Typed(informers) => informers.iter().all(|informer| informer.has_synced()),
            Informers::Compact(informers) => informers
                .iter()
                .all(|compact| compact.informer.has_synced()),
        }
    }

    /// Waits until [`has_synced`](Self::has_synced).
    pub(crate) async fn synced(&self) {
        match &self.informers {
            Informers::Typed(informers) => {
                join_all(informers.iter().map(|informer| informer.synced())).await;
            }
            Informers::Compact(informers) => {
                join_all(informers.iter().map(|compact| compact.informer.synced())).await;
            }
        }
    }

    /// Which informer holds `namespace`'s objects (`None` or `""`: the informer of a cache over
    /// all namespaces); an error if the cache does not cover it.
    fn position(&self, namespace: Option<&str>) -> Result<usize, Error> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let index = match (&self.namespaces, namespace) {
            (Namespaces::All, _) => Some(0),
            (Namespaces::Only(set), Some(namespace)) => set.iter().position(|ns| ns == namespace),
            (Namespaces::Only(_), None) => None,
        };
        index
            .filter(|index| *index < self.informer_count())
            .ok_or_else(|| self.not_cached(namespace.unwrap_or("")))
    }

    fn informer_count(&self) -> usize {
        match &self.informers {
            Informers::Typed(informers) => informers.len(),
            Informers::Compact(informers) => informers.len(),
        }
    }

    /// The typed informer holding `namespace`'s objects (see [`position`](Self::position));
    /// [`Error::CompactStorage`] when the kind is kept compact.
    pub(crate) fn informer_for(
        &self,
        namespace: Option<&str>,
    ) -> Result<&Arc<SharedIndexInformer<K>>, Error> {
        let index = self.position(namespace)?;
        self.informers()?
            .get(index)
            .ok_or_else(|| self.not_cached(namespace.unwrap_or("")))
    }

    /// The error for a read of `namespace`, which this cache does not cover.
    fn not_cached(&self, namespace: &str) -> Error {
        let cached = match &self.namespaces {
            Namespaces::All => "all namespaces".to_owned(),
            Namespaces::Only(set) => set.iter().cloned().collect::<Vec<_>>().join(", "),
        };
        Error::NamespaceNotCached {
            kind: self.kind.clone(),
            namespace: if namespace.is_empty() {
                "(none: a cluster-wide read)".to_owned()
            } else {
                namespace.to_owned()
            },
            cached,
        }
    }

    /// The cached object with `key`; an error if its namespace is not cached.
    pub(crate) fn get(&self, key: &ObjectKey) -> Result<Option<Arc<K>>, Error> {
        if let (Namespaces::Only(_), None) = (&self.namespaces, key.namespace()) {
            // A cluster-scoped key read from a per-namespace cache: no namespace holds it.
            return Err(self.not_cached(""));
        }
        let index = self.position(key.namespace())?;
        Ok(match &self.informers {
            Informers::Typed(informers) => informers[index].indexer().get_by_key(key),
            Informers::Compact(informers) => informers[index].reader.get_by_key(key),
        })
    }

    /// The cached object with `key`; `None` also when its namespace is not cached (for keys
    /// that came from this cache's own events).
    pub(crate) fn cached(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.get(key).ok().flatten()
    }

    /// Every cached object whose labels match `selector`, in every cached namespace.
    pub(crate) fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let mut out = Vec::new();
        match &self.informers {
            Informers::Typed(informers) => {
                for informer in informers {
                    out.extend(informer.lister().list(selector));
                }
            }
            Informers::Compact(informers) => {
                for compact in informers {
                    out.extend(compact.reader.list(selector));
                }
            }
        }
        out
    }

    /// The objects in `namespace` whose labels match `selector` (`""`: every cached namespace).
    pub(crate) fn list_namespace(
        &self,
        namespace: &str,
        selector: &Selector,
    ) -> Result<Vec<Arc<K>>, Error> {
        if namespace.is_empty() {
            return Ok(self.list(selector));
        }
        let index = self.position(Some(namespace))?;
        Ok(match &self.informers {
            Informers::Typed(informers) => informers[index]
                .lister()
                .namespace(namespace)
                .list(selector),
            Informers::Compact(informers) => {
                informers[index].reader.namespace(namespace).list(selector)
            }
        })
    }

    /// How many objects the cache holds.
    pub(crate) fn len(&self) -> usize {
        match &self.informers {
            Informers::Typed(informers) => informers.iter().map(|i| i.cache_size()).sum(),
            Informers::Compact(informers) => {
                informers.iter().map(|c| c.informer.cache_size()).sum()
            }
        }
    }

    /// Registers the field index `field`, computed by `extract`, on every informer. On a
    /// compact cache, the values are computed from the decoded object once, when it is cached.
    pub(crate) fn add_field_index(
        &self,
        field: &str,
        extract: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let mut registered = self.field_indexes.lock();
        if registered.contains(field) {
            return Err(Error::FieldIndexExists {
                kind: self.kind.clone(),
                index: field.to_owned(),
            });
        }
        let name = index_name(field);
        match &self.informers {
            Informers::Typed(informers) => {
                let function = index_fn(extract);
                for informer in informers {
                    informer.add_indexers(Indexers::new().with_fn(&name, function.clone()))?;
                }
            }
            Informers::Compact(informers) => {
                let function: IndexFn<Compact<K>> = index_fn(decoded_values(extract));
                for compact in informers {
                    compact
                        .informer
                        .add_indexers(Indexers::new().with_fn(&name, function.clone()))?;
                }
            }
        }
        registered.insert(field.to_owned());
        Ok(())
    }

    /// The objects whose field index `field` holds `value`, in `namespace` (`None`: in every
    /// cached namespace).
    pub(crate) fn by_field(
        &self,
        field: &str,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<K>>, Error> {
        if !self.field_indexes.lock().contains(field) {
            return Err(Error::UnknownFieldIndex {
                kind: self.kind.clone(),
                index: field.to_owned(),
            });
        }
        let (name, namespace) = (index_name(field), namespace.filter(|ns| !ns.is_empty()));
        let lookup = lookup_value(namespace, value);
        let range = match namespace {
            Some(namespace) => {
                let index = self.position(Some(namespace))?;
                index..index + 1
            }
            None => 0..self.informer_count(),
        };
        let mut out = Vec::new();
        for index in range {
            let found = match &self.informers {
                Informers::Typed(informers) => informers[index].indexer().by_index(&name, &lookup),
                Informers::Compact(informers) => informers[index].reader.by_index(&name, &lookup),
            };
            out.extend(found.map_err(informer::Error::from)?);
        }
        Ok(out)
    }
}

/// `extract` over the decoded form of a compact object; an object whose body does not decode
/// (logged) has no values.
fn decoded_values<K: Object>(
    extract: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
) -> impl Fn(&Compact<K>) -> Vec<String> + Send + Sync + 'static {
    move |compact: &Compact<K>| match compact.decode_fresh() {
        Ok(obj) => extract(&obj),
        Err(error) => {
            tracing::warn!(
                name = ?kube::Resource::meta(compact).name,
                %error,
                "a cached object does not decode; it has no field index values"
            );
            Vec::new()
        }
    }
}

/// Who uses a kind's cache, whatever the kind: what the manager needs to stop a cache no one
/// uses any more.
pub(crate) trait KindUsage: Send + Sync {
    /// Something other than a controller uses the cache: it is never stopped.
    fn pin(&self);
    /// One more controller watches the kind.
    fn acquire(&self);
    /// One controller less; true when no one uses the cache any more.
    fn release(&self) -> bool;
    /// Stops the cache's informers and removes them from `factory` and from the informer
    /// metrics.
    fn stop(&self, factory: &InformerFactory, metrics: &InformerSet);
}

impl<K: Object> KindUsage for KindCache<K> {
    fn pin(&self) {
        self.pinned.store(true, Ordering::SeqCst);
    }

    fn acquire(&self) {
        self.controllers.fetch_add(1, Ordering::SeqCst);
    }

    fn release(&self) -> bool {
        let before = self
            .controllers
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .unwrap_or(0);
        before <= 1 && !self.pinned.load(Ordering::SeqCst)
    }

    fn stop(&self, factory: &InformerFactory, metrics: &InformerSet) {
        match &self.informers {
            Informers::Typed(informers) => {
                for informer in informers {
                    factory.remove(informer);
                    metrics.remove(informer);
                }
            }
            Informers::Compact(informers) => {
                for CompactInformer { informer, .. } in informers {
                    factory.remove(informer);
                    metrics.remove(informer);
                }
            }
        }
        tracing::info!(kind = %self.kind, "no controller watches the kind any more; its informers stopped");
    }
}
