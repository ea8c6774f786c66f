//! [`CacheKind`]: a kind in the representation a cache holds it in — a typed [`Kind`] (its full
//! objects) or [`Metadata<K>`] (its objects' metadata only) — and the [`CacheSpec`] every cache
//! is built from, whatever its representation (typed, metadata-only or dynamic).

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use indexer::compact::Compact;
use informer::{
    InformerFactory, InformerScope, Object, Selectors, SharedIndexInformer, TransformFn,
};
use kube::api::DynamicObject;
use kube::core::PartialObjectMeta;

use crate::cache::storage::Storage;
use crate::kind::{DynamicKind, Kind, OwnerKind, WatchScope, describe};
use crate::rbac::Rule;

/// The metadata-only representation of the kind `K`: its objects are listed and watched as
/// `PartialObjectMetadata` and cached as [`PartialObjectMeta<K>`] — name, namespace, labels,
/// annotations, owner references, finalizers; never the spec, status or data. A fraction of a
/// full object's memory, for kinds a controller only maps to their owner or reads labels of.
///
/// Used as a type: `Watch::of::<Metadata<Secret>>()`, `cache.lister::<Metadata<Secret>>()`,
/// `ByObject::of::<Metadata<Secret>>()`. `K`'s metadata cache is a cache of its own beside `K`'s
/// full one (a manager may hold both); both follow the namespaces and selectors of `K`'s
/// settings.
pub struct Metadata<K>(PhantomData<fn() -> K>);

impl<K> fmt::Debug for Metadata<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Metadata<{}>", std::any::type_name::<K>())
    }
}

mod sealed {
    pub trait Sealed {}
    impl<K: crate::kind::Kind> Sealed for K {}
    impl<K: crate::kind::Kind> Sealed for super::Metadata<K> {}
}

/// A kind known at compile time, in the representation a cache holds it in: every [`Kind`]
/// (its full objects) and [`Metadata<K>`] (its metadata only); sealed. The type argument of
/// [`Watch::of`](crate::controller::Watch::of), [`ByObject::of`](crate::cache::ByObject::of)
/// and the [`Cache`](crate::cache::Cache)'s reads. Kinds known only at run time are
/// [`DynamicKind`] values instead.
pub trait CacheKind: sealed::Sealed + 'static {
    /// The objects the cache holds: `K` itself, or `PartialObjectMeta<K>`.
    type Object: Object;

    /// How the cache of this kind is made.
    #[doc(hidden)]
    fn spec() -> CacheSpec<Self::Object>;
}

impl<K: Kind> CacheKind for K {
    type Object = K;

    fn spec() -> CacheSpec<K> {
        CacheSpec {
            key: KindKey::new(KindId::Type(TypeId::of::<K>()), false),
            kind: describe::<K>(),
            namespaced: <K::Scope as WatchScope>::NAMESPACED,
            resource: Rule::of::<K>(),
            owner: OwnerKind::of::<K>(),
            dyntype: (),
            informer: Arc::new(|factory, namespace, selectors| {
                factory.informer_in::<K>(
                    InformerScope::namespace_or_all(namespace).selectors(selectors),
                )
            }),
            lean: None,
            compact: Some(Arc::new(|factory, namespace, selectors| {
                factory.informer_in::<Compact<K>>(
                    InformerScope::namespace_or_all(namespace).selectors(selectors),
                )
            })),
            storage: None,
        }
    }
}

impl<K: Kind> CacheKind for Metadata<K> {
    type Object = PartialObjectMeta<K>;

    fn spec() -> CacheSpec<PartialObjectMeta<K>> {
        CacheSpec {
            key: KindKey::new(KindId::Type(TypeId::of::<K>()), true),
            kind: format!("{} metadata", describe::<K>()),
            namespaced: <K::Scope as WatchScope>::NAMESPACED,
            resource: Rule::of::<K>(),
            owner: OwnerKind::of::<K>(),
            dyntype: (),
            informer: Arc::new(|factory, namespace, selectors| {
                factory.metadata_informer_in::<K>(
                    InformerScope::namespace_or_all(namespace).selectors(selectors),
                )
            }),
            // Every object's `types` says `meta.k8s.io/v1 PartialObjectMetadata`: dropped.
            lean: Some(Arc::new(informer::strip_type_meta)),
            compact: None,
            storage: None,
        }
    }
}

impl DynamicKind {
    /// How the cache of this dynamic kind is made.
    pub(crate) fn spec(&self) -> CacheSpec<DynamicObject> {
        let resource = self.resource.clone();
        CacheSpec {
            key: KindKey::new(KindId::Resource(self.id()), false),
            kind: self.describe(),
            namespaced: self.namespaced,
            resource: Rule::resource(&resource.group, &resource.plural, self.namespaced),
            owner: OwnerKind::dynamic(self),
            dyntype: resource.clone(),
            informer: Arc::new(move |factory, namespace, selectors| {
                factory.dynamic_informer(
                    &resource,
                    InformerScope::namespace_or_all(namespace).selectors(selectors),
                )
            }),
            lean: None,
            compact: None,
            storage: None,
        }
    }
}

/// Makes the shared informer of a kind in one namespace (all namespaces when `None`).
pub type InformerFn<T> = Arc<
    dyn Fn(&InformerFactory, Option<&str>, Selectors) -> Arc<SharedIndexInformer<T>> + Send + Sync,
>;

/// Makes the shared informer of a kind's compact objects in one namespace (all when `None`).
pub type CompactInformerFn<T> = Arc<
    dyn Fn(&InformerFactory, Option<&str>, Selectors) -> Arc<SharedIndexInformer<Compact<T>>>
        + Send
        + Sync,
>;

/// Everything the cache needs to know to make, name and secure the cache of one kind in one
/// representation; the same for typed, metadata-only and dynamic kinds.
pub struct CacheSpec<T: Object> {
    /// What identifies the cache.
    pub(crate) key: KindKey,
    /// The kind's name in messages.
    pub(crate) kind: String,
    /// Whether the kind's objects live in namespaces.
    pub(crate) namespaced: bool,
    /// The kind's resource, for RBAC rules.
    pub(crate) resource: Rule,
    /// The kind as owner references name it.
    pub(crate) owner: OwnerKind,
    /// The kind's dynamic type (`()`, or a dynamic kind's `ApiResource`).
    pub(crate) dyntype: T::DynamicType,
    /// Makes one of its informers.
    pub(crate) informer: InformerFn<T>,
    /// The representation's own transform, applied before the user's (`strip_type_meta` for
    /// metadata-only caches).
    pub(crate) lean: Option<TransformFn<T>>,
    /// Makes one of its informers of compact objects; `None` for representations that are
    /// always typed (metadata-only, dynamic).
    pub(crate) compact: Option<CompactInformerFn<T>>,
    /// The storage a watch asked for ([`Watch::storage`](crate::controller::Watch::storage)),
    /// which the kind's own settings must not contradict.
    pub(crate) storage: Option<Storage>,
}

/// Identifies a kind, whatever its representation: the Rust type of a typed kind, or the
/// `group/version/plural` of a dynamic one (all dynamic kinds share the `DynamicObject` type).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KindId {
    /// A [`Kind`].
    Type(TypeId),
    /// A [`DynamicKind`].
    Resource(String),
}

/// Identifies one cache: a kind, and whether it holds full objects or metadata only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KindKey {
    pub(crate) kind: KindId,
    pub(crate) metadata: bool,
}

impl KindKey {
    fn new(kind: KindId, metadata: bool) -> Self {
        Self { kind, metadata }
    }
}
