//! Metadata informers: shared informers whose cache holds each object's metadata only
//! ([`PartialObjectMeta<K>`]), handed out by the [`InformerFactory`] next to the full ones
//! (client-go's `metadatainformer`, controller-runtime's metadata-only watches).
//!
//! A metadata informer of `K` is a `SharedIndexInformer<PartialObjectMeta<K>>`: its reflector
//! lists and watches `PartialObjectMetadata` ([`reflector::MetadataListerWatcher`]), so name,
//! namespace, labels, annotations, owner references, finalizers and resource version reach the
//! cache, and nothing of the spec, status or data. Everything else is the informer's: handlers,
//! indexers, resync, transforms, `has_synced`. The factory keys it apart from the full informer
//! of the same kind, scope and selectors, so both can run side by side.
//!
//! The factory's metadata informers drop each object's `types` before caching it
//! ([`strip_type_meta`]): it is always `meta.k8s.io/v1 PartialObjectMetadata`, which says
//! nothing the informer's type does not, and costs two allocations per cached object.

use std::sync::Arc;

use kube::api::{ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::{Api, Client, Resource};
use reflector::ApiListerWatcher;

use crate::{
    InformerFactory, InformerScope, Object, Scoped, SharedIndexInformer, TransformFn,
    strip_type_meta,
};

/// A shared informer of the metadata of `K`'s objects.
pub type MetadataInformer<K> = SharedIndexInformer<PartialObjectMeta<K>>;

/// The transform of the factory's metadata informers: [`strip_type_meta`] (after
/// `strip_managed_fields` when the factory strips them). Setting another transform on such an
/// informer replaces it; compose with [`strip_type_meta`] to keep the saving.
fn lean<K: Clone + 'static>() -> TransformFn<PartialObjectMeta<K>> {
    Arc::new(strip_type_meta)
}

impl InformerFactory {
    /// The shared metadata informer of `K` across all namespaces (or cluster-wide), with the
    /// factory's selectors. Distinct from [`informer::<K>`](Self::informer): the two can
    /// coexist.
    pub fn metadata_informer<K>(&self) -> Arc<MetadataInformer<K>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: Scoped,
    {
        self.metadata_informer_in::<K>(InformerScope::all())
    }

    /// The shared metadata informer of `K` in `scope` (see
    /// [`informer_in`](Self::informer_in)).
    pub fn metadata_informer_in<K>(&self, scope: InformerScope) -> Arc<MetadataInformer<K>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: Scoped,
    {
        let api = K::Scope::confine(
            Api::<PartialObjectMeta<K>>::all(self.client()),
            scope.namespace_name(),
        );
        let selectors = self.selectors_of(&scope);
        self.shared(api, &(), selectors, ApiListerWatcher::new, Some(lean()))
    }

    /// The shared metadata informer of a resource known only at run time, in `scope`.
    pub fn dynamic_metadata_informer(
        &self,
        resource: &ApiResource,
        scope: InformerScope,
    ) -> Arc<MetadataInformer<DynamicObject>> {
        let mut api = Api::<PartialObjectMeta<DynamicObject>>::all_with(self.client(), resource);
        if let Some(namespace) = scope.namespace_name() {
            api = api.constrain(namespace);
        }
        let selectors = self.selectors_of(&scope);
        self.shared(
            api,
            resource,
            selectors,
            ApiListerWatcher::new,
            Some(lean()),
        )
    }

    fn client(&self) -> Client {
        self.inner.client.clone()
    }
}
