//! The queue between a reflector and an informer: client-go's `DeltaFIFO`.
//!
//! A reflector writes what it sees on the API server into a [`DeltaFifo`] through the
//! [`indexer::Store`] trait (add, update, delete, and `replace` for a relist, or
//! `replace_in_pages` for a paginated one, queued page by page); an informer pops
//! the accumulated changes key by key and applies them to its cache before telling handlers.
//! Each key is queued once in order of its first change and carries its [`Deltas`], oldest first,
//! so a consumer sees every state transition of an object in order.
//!
//! - [`Delta`] / [`DeltaType`]: `Added`, `Updated`, `Deleted`, `Replaced` (seen in a relist) and
//!   `Sync` (a resync of the cache). A deletion carries a [`DeletedObject`]: either the last known
//!   object or a [`DeletedFinalStateUnknown`] tombstone for an object that vanished while the
//!   watch was down, so a consumer cannot forget the tombstone case.
//! - [`DeltaFifo::pop`] waits for work and runs the consumer's callback under the fifo's processing
//!   lock, which deletions, relists and resyncs also take, so none of them sees a half-applied pop.
//! - [`DeltaFifo::has_synced`] / [`DeltaFifo::synced`]: the initial list has been fully processed.
//! - [`DeltaFifoOptions`]: the consumer's [`KnownObjects`](indexer::KnownObjects) (for tombstones
//!   and resync), `Replaced` or `Sync` on relist, and an optional [`TransformFn`].
//!
//! # Example
//!
//! A producer relists and updates; a consumer pops the changes into an [`indexer::Indexer`]:
//!
//! ```
//! use std::sync::Arc;
//!
//! use kube_rt_deltafifo::{Delta, DeltaFifo, DeltaFifoOptions};
//! use indexer::{Indexer, Indexers, Store};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::core::ObjectMeta;
//!
//! fn config_map(name: &str, rv: &str) -> Arc<ConfigMap> {
//!     Arc::new(ConfigMap {
//!         metadata: ObjectMeta {
//!             namespace: Some("default".into()),
//!             name: Some(name.into()),
//!             resource_version: Some(rv.into()),
//!             ..ObjectMeta::default()
//!         },
//!         ..ConfigMap::default()
//!     })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cache: Indexer<ConfigMap> = Indexer::new(Indexers::new().with_namespace());
//! let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())));
//!
//! // Producer: an initial list of two objects, then a change to one of them.
//! let producer = {
//!     let fifo = fifo.clone();
//!     tokio::spawn(async move {
//!         fifo.replace(vec![config_map("a", "1"), config_map("b", "2")], "2".into())?;
//!         fifo.update(config_map("a", "3"))?;
//!         fifo.close();
//!         Ok::<_, indexer::Error>(())
//!     })
//! };
//!
//! // Consumer: apply each key's deltas to the cache, until the fifo is closed and drained.
//! while let Ok(applied) = fifo
//!     .pop(|deltas, _is_in_initial_list| {
//!         let (key, deltas) = deltas.into_parts();
//!         for delta in deltas {
//!             match delta {
//!                 Delta::Deleted(_) => {
//!                     cache.delete_key(&key);
//!                 }
//!                 Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
//!                     cache.put(&key, obj)?;
//!                 }
//!             }
//!         }
//!         Ok::<_, indexer::Error>(())
//!     })
//!     .await
//! {
//!     applied?;
//! }
//! producer.await??;
//!
//! assert!(fifo.has_synced());
//! assert_eq!(cache.len(), 2);
//! let a = cache.get_by_key(&"default/a".parse()?).expect("cached");
//! assert_eq!(a.metadata.resource_version.as_deref(), Some("3"));
//! # Ok(())
//! # }
//! ```
//!
//! # Errors
//!
//! Writes through [`Store`](indexer::Store) fail with [`indexer::Error`] when an object has no
//! key or the transform rejects it, and then queue nothing: a failing `replace` leaves the queue
//! as it was (it is atomic; in a paged replace, a failing page queues nothing of that page). The reflector reports such errors to its error handler and then relists,
//! which hands the store the whole state again (objects without a name are skipped earlier). [`DeltaFifo::pop`] fails only with
//! [`Error::Closed`], once the fifo was closed and drained: the consumer should stop.

mod backlog;
mod delta;
mod delta_fifo;
mod error;
mod options;
mod paged_replace;
mod queue_lock;
mod queue_state;

pub use delta::{
    DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas, DeltasIntoIter, DeltasIter,
};
pub use delta_fifo::DeltaFifo;
pub use error::Error;
pub use options::{DeltaFifoOptions, TransformFn};
