//! The heart of the stack: client-go's shared index informer and informer factory.
//!
//! A [`SharedIndexInformer`] keeps a local cache of one resource in step with the API server and
//! tells any number of handlers about every change. Its reflector lists and watches into a fifo
//! (client-go's `DeltaFIFO` or its in-order `RealFIFO`: [`FifoKind`]); the informer pops batches
//! of up to 1 000 changes, applies each batch to its `indexer::Indexer` under one write lock,
//! then hands it to every handler in one hand-off. Each handler gets its own unbounded buffer
//! and task, so a slow or stuck handler delays neither the cache nor any other handler. Use it directly, or
//! let an [`InformerFactory`] hand out one shared informer per resource and scope so that two
//! controllers watching Pods share one cache and one watch.
//!
//! - [`ResourceEventHandler`]: `on_add` / `on_update` / `on_delete` (a deletion is a
//!   [`DeletedObject`]: the last state, or a tombstone for a deletion missed while disconnected),
//!   or `on_event`, which gets each change as an [`Event`]: the object's key as the fifo computed
//!   it, and the [`Change`] with, for an update, whether it is a resync;
//!   [`handler`] builds one from closures, [`FilteringHandler`] filters one.
//! - [`SharedIndexInformer`]: `add_event_handler` (before or after `run`; a late handler first
//!   gets the cache as initial adds, with no gap and no duplicate), per-handler resync,
//!   `set_transform` (e.g. [`strip_managed_fields`]), `indexer()`, `lister()`, `has_synced()`,
//!   and [`last_store_sync_resource_version`](SharedIndexInformer::last_store_sync_resource_version):
//!   the resource version the cache reflects, watch bookmarks included.
//! - [`FifoKind`]: the delta fifo (the default) or the in-order fifo, per informer
//!   ([`InformerBuilder::fifo`]) or for a whole factory ([`InformerFactoryBuilder::fifo`]).
//! - [`Registration`]: a handler's own `has_synced()` / `synced()`, and its buffer length.
//!   For metrics: [`SharedIndexInformer::cache_size`],
//!   [`SharedIndexInformer::listener_buffers`], [`SharedIndexInformer::list_count`] and
//!   [`SharedIndexInformer::watch_count`].
//! - [`InformerFactory`]: one shared informer per type (typed or dynamic), namespace and
//!   [`Selectors`]; default and per-type resync; `start`, `wait_for_cache_sync` (naming the
//!   informers that did not sync), `shutdown`.
//! - Metadata informers ([`MetadataInformer`], from
//!   [`InformerFactory::metadata_informer`] and its scoped, namespaced and dynamic variants):
//!   a cache of [`PartialObjectMeta<K>`] per kind and scope, listed and watched as
//!   `PartialObjectMetadata`, for controllers that only read names, labels, annotations and
//!   owner references. They cost a fraction of a full cache's memory (for the repository
//!   benchmark's pods with managedFields stripped, 2.7 KB per pod against 17.9 KB for the
//!   full cache; `docs/benchmarks.md`), share a factory with the full informers (both of one
//!   kind can run at once) and take transforms and managed-fields stripping alike. The
//!   factory's metadata informers drop each object's constant `types` ([`strip_type_meta`]).
//! - [`projection_of!`]: a lean projection type (only the fields a controller reads, decoded
//!   straight from the wire) served as a kind, for caches smaller than stripped objects
//!   (`examples/lean_projection.rs`).
//! - [`wait_for_cache_sync`]: waits on any mix of informers and registrations, without polling.
//!
//! Objects are decoded once and shared as `Arc<K>` by the cache and every handler. Behaviour
//! follows client-go (`SharedIndexInformer`, `sharedProcessor`, `processorListener`).
//!
//! # Example
//!
//! A factory, a Pod informer with a node-name index, a handler, and waiting for the cache
//! (against the in-process `apiserver-sim`; with a real cluster, use `kube::Client::try_default`):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use informer::{Indexers, InformerFactory, handler, wait_for_cache_sync};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = apiserver_sim::ApiServer::start().await?;
//! # let mut pod = Pod::default();
//! # pod.metadata.namespace = Some("default".into());
//! # pod.metadata.name = Some("web-1".into());
//! # pod.spec = Some(k8s_openapi::api::core::v1::PodSpec {
//! #     node_name: Some("node-a".into()),
//! #     containers: vec![k8s_openapi::api::core::v1::Container { name: "web".into(), image: Some("nginx".into()), ..Default::default() }],
//! #     ..Default::default()
//! # });
//! # server.create(&pod)?;
//! # let client = server.client()?;
//! let factory = InformerFactory::builder(client)
//!     .default_resync(Duration::from_secs(300))
//!     .build();
//!
//! // The shared Pod informer, with an index of pods by node.
//! let pods = factory.informer::<Pod>();
//! pods.add_indexers(Indexers::new().with("by-node", |pod: &Pod| {
//!     pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).into_iter().collect()
//! }))?;
//!
//! // A handler; in a controller it would enqueue the object's key.
//! let registration = pods.add_event_handler(
//!     handler()
//!         .named("log-pods")
//!         .on_add(|pod: Arc<Pod>, _initial| tracing::info!(pod = ?pod.metadata.name, "added"))
//!         .on_delete(|deleted| tracing::info!(tombstone = deleted.is_tombstone(), "deleted")),
//! )?;
//!
//! factory.start();
//! factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
//! // Or wait on any mix of informers and handler registrations:
//! wait_for_cache_sync(&[pods.as_ref(), &registration]).await;
//!
//! assert_eq!(pods.indexer().by_index("by-node", "node-a")?.len(), 1);
//! factory.shutdown().await;
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Errors
//!
//! Listing and watching never fail an informer: the reflector retries with backoff and relists
//! as client-go does, reporting each failure to the configured error handler. What [`Error`]
//! reports are caller mistakes and waits that ran out, none of them retried by the crate:
//! [`Error::AlreadyStarted`] (a setting changed after `run`), [`Error::Stopped`] (handlers added
//! to an informer that has stopped), [`Error::ForeignRegistration`] (a registration given to the
//! wrong informer), [`Error::NotSynced`] (a factory wait timed out; it names the informers, and
//! waiting again is allowed) and [`Error::Indexer`] (an index registration conflict).

mod error;
mod event;
mod factory;
mod fifo;
mod filtering;
mod handler;
mod listener;
mod lister_watcher;
mod metadata;
mod process;
mod processor;
mod projection;
mod registration;
mod resync;
mod scope;
mod shared_informer;
mod transform;
mod wait;

// Lets the unit tests compile a helper file written against this crate's public paths.
#[cfg(test)]
extern crate self as informer;
#[cfg(test)]
mod testing;

pub use error::Error;
pub use event::{Change, Event};
pub use factory::{InformerFactory, InformerFactoryBuilder};
pub use fifo::FifoKind;
pub use filtering::FilteringHandler;
pub use handler::{
    DeletedFinalStateUnknown, DeletedObject, HandlerFuncs, ResourceEventHandler, handler,
};
pub use metadata::MetadataInformer;
pub use processor::ListenerBuffer;
#[doc(hidden)]
pub use projection::support as __projection;
pub use registration::Registration;
pub use resync::MIN_RESYNC_PERIOD;
pub use scope::{InformerScope, Scoped, Selectors};
pub use shared_informer::{InformerBuilder, SharedIndexInformer};
pub use transform::{TransformFn, strip_managed_fields, strip_type_meta};
pub use wait::{CacheSynced, wait_for_cache_sync};

/// The layers below, re-exported for building informers and reading their caches.
pub use indexer::{Indexer, Indexers, Lister, NamespaceLister, ObjectKey, Store};
pub use reflector::{
    ApiListerWatcher, ListerWatcher, MetadataListerWatcher, Object, PartialObjectMeta,
    ReflectorOptions,
};
