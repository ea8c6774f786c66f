//! [`Kind`], the one bound on the types controllers, caches and the reconciler helpers take,
//! and [`WatchScope`], how a namespaced or cluster-scoped type is watched and addressed.

use std::sync::Arc;

use informer::{InformerFactory, MetadataInformer, Object, Selectors, SharedIndexInformer};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};

/// A Kubernetes object type known at compile time: an [`Object`] (deserializable, cloneable,
/// shareable across tasks) whose kind, group and version are static (`DynamicType = ()`) and
/// whose scope is namespaced or cluster-wide ([`WatchScope`]).
///
/// Implemented for every such type: `k8s-openapi`'s built-in types and
/// `#[derive(CustomResource)]` types alike. It is the bound of
/// [`Watch::of`](crate::controller::Watch::of), of the [`Cache`](crate::cache::Cache)'s reads
/// and of the helpers. Kinds known only at run time are
/// [`DynamicKind`](crate::cache::DynamicKind)s instead, watched as `DynamicObject`.
pub trait Kind: Object + Resource<DynamicType = (), Scope: WatchScope> {}

impl<K> Kind for K where K: Object + Resource<DynamicType = (), Scope: WatchScope> {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for kube::core::NamespaceResourceScope {}
    impl Sealed for kube::core::ClusterResourceScope {}
}

/// The scope of a typed resource (`k8s-openapi`'s `NamespaceResourceScope` or
/// `ClusterResourceScope`); sealed. Namespaced types honour the manager's namespaces and
/// per-kind settings; cluster-scoped types are always watched cluster-wide, with their own
/// selectors if [`ByObject`](crate::cache::ByObject) sets some.
pub trait WatchScope: sealed::Sealed {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// The factory's shared informer of `K` in `namespace` (all namespaces when `None`; always
    /// cluster-wide for a cluster-scoped kind) with `selectors`.
    #[doc(hidden)]
    fn informer<K>(
        factory: &InformerFactory,
        namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>;

    /// The factory's shared metadata informer of `K`, scoped as [`informer`](Self::informer).
    #[doc(hidden)]
    fn metadata_informer<K>(
        factory: &InformerFactory,
        namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<MetadataInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>;

    /// An `Api<K>` for objects in `namespace` (ignored for cluster-scoped types).
    #[doc(hidden)]
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl WatchScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn informer<K>(
        factory: &InformerFactory,
        namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.scoped_informer::<K>(namespace, Some(selectors))
    }

    fn metadata_informer<K>(
        factory: &InformerFactory,
        namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<MetadataInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.scoped_metadata_informer::<K>(namespace, Some(selectors))
    }

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl WatchScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn informer<K>(
        factory: &InformerFactory,
        _namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.informer_with_selectors::<K>(selectors)
    }

    fn metadata_informer<K>(
        factory: &InformerFactory,
        _namespace: Option<&str>,
        selectors: Selectors,
    ) -> Arc<MetadataInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.metadata_informer_with_selectors::<K>(selectors)
    }

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}
