//! The manager's cache (controller-runtime's `pkg/cache`): one logical cache per kind,
//! filled by shared informers, read by reconcilers and mappers — never the API server.
//!
//! # Reading
//!
//! A reconcile reads through its [`Context`](crate::controller::Context): `ctx.get()` is the
//! primary object, `ctx.cache()` the [`Cache`] of every other kind the manager caches.
//! [`Cache::lister`] gives a [`CacheLister`] — every object by label selector, one namespace's
//! ([`CacheLister::namespace`]), one by key, or by field index — and [`Cache::get`] one object:
//! `Ok(None)` when it does not exist, an [`Error`] when the read itself is wrong (a kind or
//! namespace the manager does not cache), so a missing object is never mistaken for an
//! unconfigured cache.
//!
//! ```
//! # use controller_runtime::controller::Context;
//! # use controller_runtime::cache::Error;
//! # use k8s_openapi::api::core::v1::{ConfigMap, Pod};
//! use kube::core::{Expression, Selector};
//!
//! # fn pods(ctx: &Context<ConfigMap>, ns: &str) -> Result<(), Error> {
//! let selector: Selector = Selector::from_iter([
//!     Expression::Equal("app".into(), "web".into()),
//!     Expression::In("tier".into(), ["front".into(), "edge".into()].into()),
//! ]);
//! // Or parse one: "app=web,tier in (front,edge)".parse::<Selector>()
//! let web_pods = ctx.cache().lister::<Pod>()?.namespace(ns).list(&selector)?;
//! let settings = ctx.cache().get::<ConfigMap>(&"shop/settings".parse().expect("a key"))?;
//! # let _ = (web_pods, settings);
//! # Ok(())
//! # }
//! ```
//!
//! A kind is cached once something registered it: a controller's watch, a
//! [field index](Cache::index_field), a request for its [informers](Cache::informers) — or a
//! [lazy read](Cache::lazy_lister), which starts its informers on first use. Reading a kind
//! nothing registered is [`Error::NotCached`], never an empty list.
//!
//! # Representations
//!
//! The kind's type says what the cache holds: a [`Kind`] (a `k8s-openapi` or
//! `#[derive(CustomResource)]` type) caches full objects; [`Metadata<K>`] caches `K`'s objects'
//! metadata only (`PartialObjectMeta<K>`: labels, annotations, owner references — a fraction of
//! the memory, and a Secret's data never reaches the process); a [`DynamicKind`], known only at
//! run time, caches `DynamicObject`s ([`Cache::dynamic_lister`]). The same three appear in a
//! controller's [`Watch`](crate::controller::Watch) and in [`ByObject`]. A kind may be cached
//! both in full and metadata-only: the two caches are distinct.
//!
//! # Storage: typed or compact
//!
//! A typed kind's cache keeps each object as the decoded `Arc<K>` by default. With
//! [`Storage::compact`] it keeps each one encoded (its JSON, `managedFields` cut out unless the
//! manager keeps them, compressed with a dictionary trained on the kind's first objects) beside
//! the lean metadata the cache needs at once (name, namespace, uid, resourceVersion, generation,
//! labels, owner references, deletion timestamp, finalizers), and decodes an object when a read
//! returns it: a tenth of the memory of kube-runtime's cache and of the typed mode's, lists and
//! watches that never decode a body, and reads that cost a decode each. Every read keeps its
//! signature and its result (listers, [`Cache::get`], [`Context::get`](crate::controller::Context::get),
//! field indexes, label selectors). Choose it per kind with [`ByObject::storage`] or
//! [`Watch::storage`](crate::controller::Watch::storage), or for every typed kind with
//! [`ManagerBuilder::default_storage`](crate::manager::ManagerBuilder::default_storage);
//! docs/benchmarks.md ("Memory: typed or compact caches") has what each costs and how to choose.
//! A compact kind's informers hold [`Compact<K>`](indexer::compact::Compact) objects: ask for
//! them with [`Cache::compact_informers`]; [`Cache::informers`] of such a kind is
//! [`Error::CompactStorage`].
//!
//! ```
//! # use controller_runtime::cache::{ByObject, Storage};
//! # use controller_runtime::manager::Manager;
//! # use k8s_openapi::api::core::v1::Pod;
//! # fn build(client: kube::Client) -> Manager {
//! Manager::builder(client)
//!     // Pods compact, keeping the last 1 000 objects read decoded; other kinds typed.
//!     .by_object(ByObject::of::<Pod>().storage(Storage::compact().recently_decoded(1_000)))
//!     .build()
//! # }
//! ```
//!
//! # What is cached: namespaces and per-kind settings
//!
//! By default a kind is cached across all namespaces with one watch.
//! [`ManagerBuilder::default_namespaces`](crate::manager::ManagerBuilder::default_namespaces)
//! caches namespaced kinds in a set of namespaces: one watch per namespace, read as one cache
//! per kind — listers and field indexes span them, [`CacheLister::has_synced`] turns true once
//! every namespace synced. Objects elsewhere are never cached nor reconciled, and reading one is
//! [`Error::NamespaceNotCached`]. [`ByObject`] (controller-runtime's `ByObject`) sets one kind's
//! namespaces, label and field selectors and transform; how settings resolve and combine is
//! described on [`ByObject`] and is the same for typed, metadata-only and dynamic caches.
//!
//! ```
//! # use controller_runtime::cache::{ByObject, Metadata};
//! # use controller_runtime::manager::Manager;
//! # use k8s_openapi::api::core::v1::{Namespace, Secret};
//! # fn build(client: kube::Client) -> Manager {
//! Manager::builder(client)
//!     .default_namespaces(["shop", "billing", "audit"])
//!     .by_object(ByObject::of::<Secret>().namespaces(["shop"]).labels("app=shop"))
//!     .by_object(ByObject::of::<Namespace>().labels("tenant"))
//!     .build()
//! # }
//! ```
//!
//! Cached objects lose `metadata.managedFields` unless
//! [`strip_managed_fields(false)`](crate::manager::ManagerBuilder::strip_managed_fields) keeps
//! them; a kind's transform runs after that.
//!
//! # Field indexes
//!
//! controller-runtime's `FieldIndexer` and `MatchingFields`: [`Cache::index_field`] registers a
//! name and a function from an object to the values of one of its fields; query it with
//! [`CacheLister::by_field`] (every cached namespace) or [`NamespacedCacheLister::by_field`]
//! (one). The typical use is a `watches` mapper that answers "every Foo that references this
//! ConfigMap" without scanning every Foo (the repository's `config-reloader` example).
//!
//! # Kinds added late, and dynamic kinds
//!
//! [`Cache::wait_for_kind`] waits until the API server serves a kind (a CRD installed after
//! the operator started; [`Error::KindNotServed`] names it after the timeout); a controller
//! built afterwards starts its informers at once. [`DynamicKind::discover`] asks discovery for
//! a kind known only at run time.
//!
//! # Errors
//!
//! [`Error`]: a kind or namespace not cached, an unknown or duplicate field index,
//! contradictory settings, a lazy read before start or past the sync timeout, a kind the
//! server does not serve. None stops the manager.

mod error;
mod field_index;
mod kind;
mod kind_cache;
mod lister;
mod options;
mod reader;
mod registry;
mod served;
mod storage;
mod transform;

pub use crate::kind::{DynamicKind, Kind, WatchScope};
pub use error::Error;
/// The bound every cached object meets (deserializable, cloneable, shareable across tasks): of
/// [`Watch`](crate::controller::Watch), [`ByObject`] and [`Reconciler`](crate::controller::Reconciler).
pub use informer::Object;
/// Label and field selectors, for [`ManagerBuilder::default_selectors`](crate::manager::ManagerBuilder::default_selectors).
pub use informer::Selectors;
pub use kind::{CacheKind, Metadata};
pub use lister::{CacheLister, NamespacedCacheLister};
pub use options::ByObject;
pub use reader::Cache;
pub use storage::Storage;

pub(crate) use kind::{CacheSpec, KindKey};
pub(crate) use kind_cache::KindCache;
pub(crate) use options::{CacheOptions, Namespaces};
pub(crate) use registry::Registry;
pub(crate) use storage::{CompactInformer, Informers};
