//! [`Kind`], the one bound on the types controllers, caches and the reconciler helpers take,
//! and [`WatchScope`], how a namespaced or cluster-scoped type is watched and addressed.

use informer::Object;
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
pub trait WatchScope: sealed::Sealed + informer::Scoped {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// An `Api<K>` for objects in `namespace` (ignored for cluster-scoped types).
    #[doc(hidden)]
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl WatchScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

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

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}
