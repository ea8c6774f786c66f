//! The cache layer of the stack: a thread-safe store of Kubernetes objects with named indices,
//! and the keys and listers that read it.
//!
//! This crate mirrors client-go's `tools/cache` store: an informer applies every change it pops
//! from its `DeltaFifo` to an [`Indexer`], and controllers read the cache through a [`Lister`]
//! instead of asking the API server. It knows nothing of networking and can be used on its own
//! wherever objects need a keyed, indexed, shared cache.
//!
//! - [`ObjectKey`] and [`key_of`]: `namespace/name` keys (client-go's `MetaNamespaceKeyFunc`);
//!   [`ObjectKeyRef`] borrows one from an object's metadata for lookups without allocation.
//! - [`Store`]: the write interface a reflector feeds, implemented by [`Indexer`] and by
//!   `deltafifo::DeltaFifo`; [`KnownObjects`]: the read view a `DeltaFifo` uses on relist.
//! - [`Indexer`]: the cache, with [`Indexers`] of named [`IndexFn`]s (the built-in one is
//!   [`NAMESPACE_INDEX`]) maintained incrementally on every write.
//! - [`Lister`]: label-selector reads, per namespace from the namespace index.
//! - [`compact`]: the compact storage mode: [`compact::Compact<K>`] keeps an object as its
//!   encoded JSON and lean metadata, decoded when read ([`compact::CompactLister`]), encoded by
//!   a per-kind [`compact::Codec`].
//!
//! Objects are stored as `Arc<K>` and shared, never deep-cloned: a read hands out `Arc` clones.
//! All errors are [`Error`]s; none of them is transient.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! use indexer::{Indexer, Indexers, Lister, Store};
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::core::ObjectMeta;
//! use kube::core::{Expression, Selector};
//!
//! fn pod(ns: &str, name: &str, node: &str, app: &str) -> Arc<Pod> {
//!     let mut pod = Pod {
//!         metadata: ObjectMeta {
//!             namespace: Some(ns.into()),
//!             name: Some(name.into()),
//!             labels: Some([("app".to_string(), app.to_string())].into()),
//!             ..ObjectMeta::default()
//!         },
//!         ..Pod::default()
//!     };
//!     pod.spec.get_or_insert_with(Default::default).node_name = Some(node.into());
//!     Arc::new(pod)
//! }
//!
//! # fn main() -> Result<(), indexer::Error> {
//! // A cache with the namespace index and a custom index of pods by node.
//! let pods = Indexer::new(Indexers::new().with_namespace().with("by-node", |pod: &Pod| {
//!     pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).into_iter().collect()
//! }));
//! pods.add(pod("web", "web-1", "node-a", "web"))?;
//! pods.add(pod("web", "web-2", "node-b", "web"))?;
//! pods.add(pod("db", "db-1", "node-a", "db"))?;
//!
//! // Query the custom index: which pods run on node-a?
//! let keys = pods.index_keys("by-node", "node-a")?;
//! assert_eq!(keys.iter().map(ToString::to_string).collect::<Vec<_>>(), ["db/db-1", "web/web-1"]);
//!
//! // An update that moves a pod to another node moves it in the index too.
//! pods.update(pod("web", "web-1", "node-b", "web"))?;
//! assert_eq!(pods.by_index("by-node", "node-b")?.len(), 2);
//!
//! // A lister reads one namespace from the namespace index, filtered by labels.
//! let lister = Lister::new(pods.clone());
//! let web: Selector = Expression::Equal("app".into(), "web".into()).into();
//! assert_eq!(lister.namespace("web").list(&web).len(), 2);
//! assert!(lister.namespace("db").get("db-1").is_some());
//! # Ok(())
//! # }
//! ```
//!
//! # Errors
//!
//! Every fallible call returns [`Error`]. None is transient, so none is worth retrying as is:
//! [`Error::MissingName`] and [`Error::InvalidKey`] mean the input has no valid key (fix the
//! object or the key text); [`Error::UnknownIndex`] and [`Error::IndexExists`] mean the index
//! configuration is wrong; [`Error::Rejected`] carries a store's own reason (a failing transform,
//! for example). A failed write leaves the store and its indices exactly as they were.

pub mod compact;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod index;
mod indexer;
mod key;
mod lister;
mod members;
mod store;
mod thread_safe_store;

pub use error::Error;
pub use index::{FieldFn, IndexFn, Indexers, NAMESPACE_INDEX, namespace_index_fn};
pub use indexer::Indexer;
pub use key::{ObjectKey, ObjectKeyRef, key_of};
pub use lister::{Lister, NamespaceLister};
pub use store::{Backpressure, KnownObjects, ReplaceInPages, Store};
