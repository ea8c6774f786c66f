//! The object types this crate works with: [`Kind`], the one bound on the types controllers,
//! the manager's caches and the reconciler helpers take, and [`WatchScope`], how a namespaced or
//! cluster-scoped type is watched and addressed.

use std::sync::Arc;

use informer::{InformerFactory, MetadataInformer, Object, Selectors, SharedIndexInformer};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};

use crate::manager::options::Namespaces;

/// A Kubernetes object type known at compile time: an [`Object`] (deserializable, cloneable,
/// shareable across tasks) whose kind, group and version are static (`DynamicType = ()`) and
/// whose scope is namespaced or cluster-wide ([`WatchScope`]).
///
/// Implemented for every such type: `k8s-openapi`'s built-in types and
/// `#[derive(CustomResource)]` types alike. It is the bound of [`Controller::for_`],
/// [`owns`](crate::ControllerBuilder::owns), [`watches`](crate::ControllerBuilder::watches),
/// [`Cache`](crate::Cache) and the helpers. Kinds known only at run time are
/// [`DynamicKind`](crate::DynamicKind)s instead, watched as `DynamicObject`;
/// [`Reconciler`](crate::Reconciler) and [`Context`](crate::Context) take both.
///
/// [`Controller::for_`]: crate::Controller::for_
pub trait Kind: Object + Resource<DynamicType = (), Scope: WatchScope> {}

impl<K> Kind for K where K: Object + Resource<DynamicType = (), Scope: WatchScope> {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for kube::core::NamespaceResourceScope {}
    impl Sealed for kube::core::ClusterResourceScope {}
}

/// The scope of a typed resource (`k8s-openapi`'s `NamespaceResourceScope` or
/// `ClusterResourceScope`); sealed. Namespaced types honour the manager's namespaces and
/// per-kind options; cluster-scoped types are always watched cluster-wide, with their own
/// selectors if [`ByObject`](crate::ByObject) sets some.
pub trait WatchScope: sealed::Sealed {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// The manager's shared informers for `K`: one across all namespaces, or one per namespace
    /// of `namespaces` (in the set's order).
    #[doc(hidden)]
    fn informers<K>(
        factory: &InformerFactory,
        namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<SharedIndexInformer<K>>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>;

    /// The manager's shared metadata informers for `K`, scoped as [`informers`](Self::informers).
    #[doc(hidden)]
    fn metadata_informers<K>(
        factory: &InformerFactory,
        namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<MetadataInformer<K>>>
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

    fn informers<K>(
        factory: &InformerFactory,
        namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<SharedIndexInformer<K>>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        namespaces
            .each(|namespace| factory.scoped_informer::<K>(namespace, Some(selectors.clone())))
    }

    fn metadata_informers<K>(
        factory: &InformerFactory,
        namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<MetadataInformer<K>>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        namespaces.each(|namespace| {
            factory.scoped_metadata_informer::<K>(namespace, Some(selectors.clone()))
        })
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

    fn informers<K>(
        factory: &InformerFactory,
        _namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<SharedIndexInformer<K>>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        vec![factory.informer_with_selectors::<K>(selectors)]
    }

    fn metadata_informers<K>(
        factory: &InformerFactory,
        _namespaces: &Namespaces,
        selectors: Selectors,
    ) -> Vec<Arc<MetadataInformer<K>>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        vec![factory.metadata_informer_with_selectors::<K>(selectors)]
    }

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}
