//! Metadata caches in the manager: [`Manager::metadata_informer`], [`Cache::metadata_lister`]
//! and [`Cache::get_metadata`], over the manager's shared informers of
//! [`PartialObjectMeta<K>`] (the ones [`owns_metadata`](crate::ControllerBuilder::owns_metadata)
//! and [`watches_metadata`](crate::ControllerBuilder::watches_metadata) use).
//!
//! A metadata informer of `K` is scoped like `K`'s full informer (the manager's namespace,
//! `K`'s selectors) but is a cache and a watch of its own: a manager may hold both. It comes
//! from the factory's metadata informers, which drop each object's constant `types`
//! (`informer::strip_type_meta`) after the manager's managed-fields stripping.

use std::any::{TypeId, type_name};
use std::sync::Arc;

use indexer::{Lister, ObjectKey};
use informer::MetadataInformer;
use kube::core::PartialObjectMeta;

use crate::error::Error;
use crate::kind::{Kind, WatchScope};
use crate::manager::cache::{Cache, Shared};
use crate::manager::running::Manager;

impl Shared {
    /// The manager's metadata informer for `K` (scoped by the manager's namespace and `K`'s
    /// selectors), created on first request through the factory's metadata informers (which
    /// cache lean objects); it runs from the next `start`.
    pub(crate) fn metadata_informer<K: Kind>(&self) -> Arc<MetadataInformer<K>> {
        self.cached
            .lock()
            .insert(TypeId::of::<PartialObjectMeta<K>>());
        let selectors = self.selectors.get(&TypeId::of::<K>()).cloned();
        let informer = <K::Scope as WatchScope>::metadata_informer::<K>(
            &self.factory,
            self.namespace.as_deref(),
            selectors,
        );
        self.informers.insert(informer.clone());
        informer
    }
}

impl Manager {
    /// The manager's shared metadata informer of `K` (scoped by the manager's namespace and
    /// `K`'s selectors): `K`'s objects with their metadata only. Request it before `start`,
    /// like [`informer`](Self::informer).
    pub fn metadata_informer<K: Kind>(&self) -> Arc<MetadataInformer<K>> {
        self.cache().shared.metadata_informer::<K>()
    }
}

impl Cache {
    /// The lister of `K`'s metadata cache, if the manager watches `K` metadata-only (a
    /// controller's [`owns_metadata`](crate::ControllerBuilder::owns_metadata) or
    /// [`watches_metadata`](crate::ControllerBuilder::watches_metadata), or
    /// [`Manager::metadata_informer`]); [`Error::NotCached`] otherwise.
    pub fn metadata_lister<K: Kind>(&self) -> Result<Lister<PartialObjectMeta<K>>, Error> {
        let cached = TypeId::of::<PartialObjectMeta<K>>();
        if !self.shared.cached.lock().contains(&cached) {
            return Err(Error::NotCached(
                type_name::<PartialObjectMeta<K>>().to_owned(),
            ));
        }
        Ok(self.shared.metadata_informer::<K>().lister())
    }

    /// The cached metadata of the `K` with `key`, if any.
    pub fn get_metadata<K: Kind>(
        &self,
        key: &ObjectKey,
    ) -> Result<Option<Arc<PartialObjectMeta<K>>>, Error> {
        Ok(self.metadata_lister::<K>()?.indexer().get_by_key(key))
    }
}
