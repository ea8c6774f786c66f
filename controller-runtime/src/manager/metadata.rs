//! Metadata caches in the manager: [`Manager::metadata_informer`], [`Cache::metadata_lister`]
//! and [`Cache::get_metadata`], over the manager's shared informers of
//! [`PartialObjectMeta<K>`] (the ones [`owns_metadata`](crate::ControllerBuilder::owns_metadata)
//! and [`watches_metadata`](crate::ControllerBuilder::watches_metadata) use).
//!
//! A metadata informer of `K` is scoped like `K`'s full informer (the manager's namespace,
//! `K`'s selectors) but is a cache and a watch of its own: a manager may hold both.

use std::sync::Arc;

use indexer::{Lister, ObjectKey};
use informer::MetadataInformer;
use kube::core::PartialObjectMeta;

use crate::error::Error;
use crate::kind::Kind;
use crate::manager::cache::Cache;
use crate::manager::running::Manager;

impl Manager {
    /// The manager's shared metadata informer of `K` (scoped by the manager's namespace and
    /// `K`'s selectors): `K`'s objects with their metadata only. Request it before `start`,
    /// like [`informer`](Self::informer).
    pub fn metadata_informer<K: Kind>(&self) -> Arc<MetadataInformer<K>> {
        self.informer::<PartialObjectMeta<K>>()
    }
}

impl Cache {
    /// The lister of `K`'s metadata cache, if the manager watches `K` metadata-only (a
    /// controller's [`owns_metadata`](crate::ControllerBuilder::owns_metadata) or
    /// [`watches_metadata`](crate::ControllerBuilder::watches_metadata), or
    /// [`Manager::metadata_informer`]); [`Error::NotCached`] otherwise.
    pub fn metadata_lister<K: Kind>(&self) -> Result<Lister<PartialObjectMeta<K>>, Error> {
        self.lister::<PartialObjectMeta<K>>()
    }

    /// The cached metadata of the `K` with `key`, if any.
    pub fn get_metadata<K: Kind>(
        &self,
        key: &ObjectKey,
    ) -> Result<Option<Arc<PartialObjectMeta<K>>>, Error> {
        self.get::<PartialObjectMeta<K>>(key)
    }
}
