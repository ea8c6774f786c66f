//! Metadata caches in the manager: [`Manager::metadata_informer`], [`Cache::metadata_lister`]
//! and [`Cache::get_metadata`], over one logical cache of [`PartialObjectMeta<K>`] per kind
//! (the one [`owns_metadata`](crate::ControllerBuilder::owns_metadata) and
//! [`watches_metadata`](crate::ControllerBuilder::watches_metadata) use).
//!
//! `K`'s metadata cache covers the namespaces and selectors of `K`'s cache settings (the
//! manager's defaults or `K`'s [`ByObject`](crate::ByObject); a `ByObject` transform is typed
//! over full objects and does not apply), one informer per cached namespace, but is a cache and
//! a watch of its own: a manager may hold both. Its informers come from the factory's metadata
//! informers, which drop each object's constant `types` (`informer::strip_type_meta`) after the
//! manager's managed-fields stripping. Ask for them through these methods or the controller
//! builder's metadata watches: `Manager::informer::<PartialObjectMeta<K>>()` is a cache of its own
//! over the same shared informer, which keeps each object's `types` if it created it first.

use std::any::type_name;
use std::sync::Arc;

use indexer::ObjectKey;
use informer::MetadataInformer;
use kube::core::PartialObjectMeta;

use crate::error::Error;
use crate::kind::{Kind, WatchScope};
use crate::manager::cache::{Cache, KindKey, Shared};
use crate::manager::kind_cache::{KindCache, KindUsage};
use crate::manager::lister::CacheLister;
use crate::manager::running::Manager;
use crate::rbac::Rule;

impl Shared {
    /// The metadata cache of `K`, created on first request and kept for the manager's lifetime.
    pub(crate) fn metadata_kind_cache<K: Kind>(&self) -> Arc<KindCache<PartialObjectMeta<K>>> {
        let cache = self.controller_metadata_kind_cache::<K>();
        cache.pin();
        cache
    }

    /// The metadata cache of `K` for a controller's watch: not kept once no controller uses it.
    pub(crate) fn controller_metadata_kind_cache<K: Kind>(
        &self,
    ) -> Arc<KindCache<PartialObjectMeta<K>>> {
        self.get_or_create(KindKey::metadata::<K>(), Rule::of::<K>(), || {
            let options = self
                .options
                .resolve::<K>(<K::Scope as WatchScope>::NAMESPACED);
            let informers = <K::Scope as WatchScope>::metadata_informers::<K>(
                &self.factory,
                &options.namespaces,
                options.selectors,
            );
            for informer in &informers {
                self.informers.insert(informer.clone());
            }
            let kind = format!("{} ({}) metadata", K::kind(&()), K::api_version(&()));
            KindCache::new(kind, options.namespaces, informers)
        })
    }
}

impl Manager {
    /// The manager's shared metadata informer of `K` (scoped by `K`'s cache settings): `K`'s
    /// objects with their metadata only. When `K` is cached in several namespaces this is the
    /// first namespace's informer; read all of them through [`Cache::metadata_lister`].
    /// Requested after `start`, it starts at once.
    pub fn metadata_informer<K: Kind>(&self) -> Arc<MetadataInformer<K>> {
        let cache = self.cache().shared.metadata_kind_cache::<K>();
        // A kind cache always has at least one informer (a namespace set is never empty).
        Arc::clone(&cache.informers()[0])
    }
}

impl Cache {
    /// The lister of `K`'s metadata cache, if the manager watches `K` metadata-only (a
    /// controller's [`owns_metadata`](crate::ControllerBuilder::owns_metadata) or
    /// [`watches_metadata`](crate::ControllerBuilder::watches_metadata), or
    /// [`Manager::metadata_informer`]); [`Error::NotCached`] otherwise.
    pub fn metadata_lister<K: Kind>(&self) -> Result<CacheLister<PartialObjectMeta<K>>, Error> {
        self.shared
            .registered_as(&KindKey::metadata::<K>())
            .map(CacheLister::new)
            .ok_or_else(|| Error::NotCached(type_name::<PartialObjectMeta<K>>().to_owned()))
    }

    /// The cached metadata of the `K` with `key`, if any; [`Error::NamespaceNotCached`] if the
    /// manager does not cache `key`'s namespace.
    pub fn get_metadata<K: Kind>(
        &self,
        key: &ObjectKey,
    ) -> Result<Option<Arc<PartialObjectMeta<K>>>, Error> {
        self.metadata_lister::<K>()?.get_by_key(key)
    }
}
