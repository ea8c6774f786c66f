//! [`WatchScope`]: how the manager builds an informer for namespaced and cluster-scoped types.

use std::sync::Arc;

use informer::{InformerFactory, Object, Selectors, SharedIndexInformer};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};

mod sealed {
    pub trait Sealed {}
    impl Sealed for kube::core::NamespaceResourceScope {}
    impl Sealed for kube::core::ClusterResourceScope {}
}

/// The scope of a typed resource (`k8s-openapi`'s `NamespaceResourceScope` or
/// `ClusterResourceScope`); sealed. Namespaced types honour the manager's namespace and per-type
/// selectors; cluster-scoped types are always watched cluster-wide with the manager's default
/// selectors.
pub trait WatchScope: sealed::Sealed {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// The manager's shared informer for `K`.
    #[doc(hidden)]
    fn informer<K>(
        factory: &InformerFactory,
        namespace: Option<&str>,
        selectors: Option<Selectors>,
    ) -> Arc<SharedIndexInformer<K>>
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
        selectors: Option<Selectors>,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.scoped_informer::<K>(namespace, selectors)
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
        _selectors: Option<Selectors>,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = (), Scope = Self>,
    {
        factory.informer::<K>()
    }

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}
