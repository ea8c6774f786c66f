//! [`Cache`]: the manager's caches as a reconciler, a mapper or an operator's `main` reads and
//! extends them.

use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use indexer::compact::Compact;
use informer::SharedIndexInformer;
use kube::api::DynamicObject;

use crate::cache::error::Error;
use crate::cache::kind::{CacheKind, CacheSpec};
use crate::cache::lister::CacheLister;
use crate::cache::registry::Registry;
use crate::cache::served::wait_served;
use crate::kind::{DynamicKind, Kind};

/// Reads objects from the manager's caches (never from the API server), and registers what the
/// caches hold beyond the controllers' watches. Cheap to clone; from
/// [`Manager::cache`](crate::manager::Manager::cache) or
/// [`Context::cache`](crate::controller::Context::cache).
///
/// Every read takes the kind as a type: a typed [`Kind`](crate::cache::Kind) for its full
/// objects (`cache.lister::<Pod>()`), or [`Metadata<K>`](crate::cache::Metadata) for its
/// metadata-only cache (`cache.lister::<Metadata<Secret>>()`); kinds known only at run time
/// are read with [`dynamic_lister`](Self::dynamic_lister).
///
/// [`lister`](Self::lister) and [`get`](Self::get) read kinds the manager already caches: those
/// its controllers watch, those with a [field index](Self::index_field), and those whose
/// [`informers`](Self::informers) were asked for. [`lazy_lister`](Self::lazy_lister) reads any
/// kind, starting its informers on first use once the manager runs (controller-runtime's lazy
/// cache).
#[derive(Clone)]
pub struct Cache {
    pub(crate) registry: Arc<Registry>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("default_namespaces", &self.registry.default_namespaces())
            .field("kinds", &self.registry.kind_count())
            .finish()
    }
}

impl Cache {
    /// The lister of `C`'s cache: namespace, label-selector and field-index reads across every
    /// namespace the manager caches `C` in. [`Error::NotCached`] if nothing registered `C`.
    pub fn lister<C: CacheKind>(&self) -> Result<CacheLister<C::Object>, Error> {
        self.registered(&C::spec())
    }

    /// The cached object of `C` with `key`, if any; [`Error::NamespaceNotCached`] if the
    /// manager does not cache `key`'s namespace, [`Error::NotCached`] if it does not cache `C`.
    pub fn get<C: CacheKind>(&self, key: &ObjectKey) -> Result<Option<Arc<C::Object>>, Error> {
        self.lister::<C>()?.get_by_key(key)
    }

    /// The lister of the dynamic kind `kind`'s cache; [`Error::NotCached`] if nothing
    /// registered it (a controller's watch, or [`dynamic_informers`](Self::dynamic_informers)).
    pub fn dynamic_lister(&self, kind: &DynamicKind) -> Result<CacheLister<DynamicObject>, Error> {
        self.registered(&kind.spec())
    }

    /// The lister of `C`'s cache, starting `C`'s informers if nothing registered `C` yet and
    /// waiting until they synced (at most the manager's cache-sync timeout:
    /// [`Error::LazySyncTimeout`] names the kind). Only once the manager runs
    /// ([`Error::NotStarted`] before). A kind started this way stays cached until the manager
    /// stops.
    pub async fn lazy_lister<C: CacheKind>(&self) -> Result<CacheLister<C::Object>, Error> {
        let spec = C::spec();
        if !self.registry.is_running() {
            return Err(Error::NotStarted(spec.kind));
        }
        let cache = self.registry.kind_cache(&spec)?;
        let timeout = self.registry.lazy_sync_timeout;
        if tokio::time::timeout(timeout, cache.synced()).await.is_err() {
            return Err(Error::LazySyncTimeout {
                kind: spec.kind,
                timeout,
            });
        }
        Ok(CacheLister::new(cache))
    }

    /// Every informer of `C`'s cache — one per cached namespace, or a single one — created on
    /// first request (and kept for the manager's lifetime): for adding event handlers of your
    /// own, or to cache a kind no controller watches. Requested after `start`, they start at
    /// once. [`Error::InvalidSettings`] if `C`'s cache settings contradict each other;
    /// [`Error::CompactStorage`] if `C` is kept [compact](crate::cache::Storage) (see
    /// [`compact_informers`](Self::compact_informers)).
    pub fn informers<C: CacheKind>(
        &self,
    ) -> Result<Vec<Arc<SharedIndexInformer<C::Object>>>, Error> {
        Ok(self.registry.kind_cache(&C::spec())?.informers()?.to_vec())
    }

    /// Every informer of the typed kind `K`'s cache, as [`informers`](Self::informers), when
    /// `K` is kept [compact](crate::cache::Storage): their objects are [`Compact<K>`], whose
    /// metadata is at hand and whose body [`Compact::decode`] gives. Empty when `K` is kept
    /// typed.
    pub fn compact_informers<K: Kind>(
        &self,
    ) -> Result<Vec<Arc<SharedIndexInformer<Compact<K>>>>, Error> {
        Ok(self.registry.kind_cache(&K::spec())?.compact_informers())
    }

    /// Every informer of the dynamic kind `kind`'s cache, as [`informers`](Self::informers).
    pub fn dynamic_informers(
        &self,
        kind: &DynamicKind,
    ) -> Result<Vec<Arc<SharedIndexInformer<DynamicObject>>>, Error> {
        Ok(self
            .registry
            .kind_cache(&kind.spec())?
            .informers()?
            .to_vec())
    }

    /// Registers the field index `name` on `C`'s cache (controller-runtime's
    /// `FieldIndexer.IndexField`): `extract` returns the values of the field for an object (any
    /// number). Query it with [`CacheLister::by_field`] — from a reconciler's
    /// [`Context`](crate::controller::Context), or from a `watches` mapper through a
    /// [`Cache`] — to find, say, every `Foo` whose `spec.configMapRef` names a ConfigMap.
    /// Registering caches `C` (as a watch of it would). Index values are kept per namespace,
    /// so a query can be limited to one. [`Error::FieldIndexExists`] if `name` is already
    /// registered on `C`.
    ///
    /// ```
    /// # use controller_runtime::cache::{Cache, Error};
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # fn index(cache: &Cache) -> Result<(), Error> {
    /// cache.index_field::<Pod>("spec.nodeName", |pod| {
    ///     pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).into_iter().collect()
    /// })?;
    /// // Later, in a reconcile: every cached Pod on node-a.
    /// let on_node_a = cache.lister::<Pod>()?.by_field("spec.nodeName", "node-a")?;
    /// # let _ = on_node_a;
    /// # Ok(())
    /// # }
    /// ```
    pub fn index_field<C: CacheKind>(
        &self,
        name: &str,
        extract: impl Fn(&C::Object) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        self.registry
            .kind_cache(&C::spec())?
            .add_field_index(name, extract)
    }

    /// Waits until the API server serves `C` — its CustomResourceDefinition installed and
    /// established — for at most `timeout`; [`Error::KindNotServed`] names the kind if it is
    /// still not served then. Use it before adding a controller for a kind installed after the
    /// manager started: once it returns, a controller built for `C` starts its informers, waits
    /// for their sync and starts its workers. Other API errors (say, forbidden) are returned
    /// at once.
    pub async fn wait_for_kind<C: CacheKind>(&self, timeout: Duration) -> Result<(), Error> {
        self.wait_served(&C::spec(), timeout).await
    }

    /// Waits until the API server serves the dynamic kind `kind`, as
    /// [`wait_for_kind`](Self::wait_for_kind).
    pub async fn wait_for_dynamic_kind(
        &self,
        kind: &DynamicKind,
        timeout: Duration,
    ) -> Result<(), Error> {
        self.wait_served(&kind.spec(), timeout).await
    }

    /// The lister of the cache `spec` describes, if something registered it.
    fn registered<T: informer::Object>(
        &self,
        spec: &CacheSpec<T>,
    ) -> Result<CacheLister<T>, Error> {
        self.registry
            .registered(&spec.key)
            .map(CacheLister::new)
            .ok_or_else(|| Error::NotCached(spec.kind.clone()))
    }

    async fn wait_served<T: informer::Object>(
        &self,
        spec: &CacheSpec<T>,
        timeout: Duration,
    ) -> Result<(), Error> {
        let api = kube::Api::<T>::all_with(self.registry.client.clone(), &spec.dyntype);
        let kind = format!("{} (resource {})", spec.kind, spec.resource.resource_name());
        wait_served(&api, kind, timeout).await
    }
}
