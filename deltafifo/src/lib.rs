//! The queue between a reflector and an informer, in client-go's two kinds: `DeltaFIFO` and the
//! in-order `RealFIFO`.
//!
//! A reflector writes what it sees on the API server into a fifo through the
//! [`indexer::Store`] trait (add, update, delete, and `replace` for a relist, or
//! `replace_in_pages` for a paginated one); an informer pops the changes and applies them to its
//! cache before telling handlers. The two fifos differ in what they keep and how they hand it
//! out:
//!
//! | | [`DeltaFifo`] | [`InOrderFifo`] |
//! |---|---|---|
//! | order | by key: each key once, in order of its first change, with its [`Deltas`] | every change in arrival order, never merged |
//! | relist | one `Replaced` per object, and a tombstone per vanished key, worked out by the fifo from the consumer's [`KnownObjects`](indexer::KnownObjects) | one [`Item::Replaced`]: the consumer works out the deletions against its cache ([`Replacement::deletions`]) |
//! | resync | one `Sync` per known object without pending changes | one [`Item::Resync`] |
//! | pop | one key under the fifo's processing lock, which deletions and relists wait for | a [`Batch`] of up to N items; nothing a producer needs is held while it is processed |
//! | client-go | `DeltaFIFO` (before 1.33) | `RealFIFO` with `AtomicFIFO`, batches and `UnlockWhileProcessingFIFO` (1.36) |
//!
//! Choose the in-order fifo when handlers should see every state an object went through, or
//! when a slow consumer must not hold up the producer; the delta fifo when the consumer benefits
//! from an object's changes arriving together. Both bound the backlog alike
//! ([`DeltaFifoOptions::backlog_limit`], [`InOrderFifoOptions::backlog_limit`]) and say when the
//! initial list has been processed (`has_synced`).
//!
//! The delta fifo holds one entry per waiting key, so its backlog bound counts objects and a
//! burst of changes to the same objects costs no room, and it applies a paginated relist page
//! by page; the in-order fifo collects a paginated relist and queues it whole. On the
//! repository's benchmark rows (a relist of 100k objects, 1M updates over 100k keys popped one
//! at a time, while written, and in batches of 1 000; 2 cores) the in-order fifo ran 1.04× to
//! 2.09× the delta fifo and 3.1× to 7.7× client-go's `RealFIFO` (`docs/benchmarks.md`;
//! `docs/fifos.md` sets the two side by side).
//!
//! - [`Delta`] / [`DeltaType`]: `Added`, `Updated`, `Deleted`, `Replaced` (seen in a relist) and
//!   `Sync` (a resync of the cache). A deletion carries a [`DeletedObject`]: either the last known
//!   object or a [`DeletedFinalStateUnknown`] tombstone for an object that vanished while the
//!   watch was down, so a consumer cannot forget the tombstone case.
//! - [`DeltaFifo::pop`] waits for work and runs the consumer's callback under the fifo's processing
//!   lock, which deletions, relists and resyncs also take, so none of them sees a half-applied pop.
//! - [`InOrderFifo::pop_batch`] waits for work and hands out a [`Batch`] of [`Item`]s, each
//!   carrying the key computed when it was written; bookmarks ([`InOrderFifo::bookmark`]) move
//!   [`InOrderFifo::synced_resource_version`] once what came before them has been processed.
//! - [`Queue`]: the one trait both implement (batch pop, `has_synced`, close, bookmarks), so a
//!   consumer drives either; [`DeltaFifo::pop_batch`] hands out up to N keys as one batch.
//! - `has_synced` / `synced`: the initial list has been fully processed.
//! - [`DeltaFifoOptions`], [`InOrderFifoOptions`]: known objects (delta fifo only), `Replaced`
//!   or `Sync` on relist (delta fifo only), the bound on the backlog and an optional
//!   [`TransformFn`].
//!
//! # Example
//!
//! A producer relists and updates; a consumer pops the changes into an [`indexer::Indexer`]:
//!
//! ```
//! use std::sync::Arc;
//!
//! use deltafifo::{Delta, DeltaFifo, DeltaFifoOptions};
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
//! The same with an in-order fifo: the consumer gets the relist whole and tombstones what its
//! cache holds that the list lacks.
//!
//! ```
//! use std::sync::Arc;
//!
//! use deltafifo::{Delta, InOrderFifo, Item};
//! use indexer::{Indexer, Indexers, Store};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! # use kube::core::ObjectMeta;
//! # fn config_map(name: &str, rv: &str) -> Arc<ConfigMap> {
//! #     Arc::new(ConfigMap {
//! #         metadata: ObjectMeta {
//! #             namespace: Some("default".into()),
//! #             name: Some(name.into()),
//! #             resource_version: Some(rv.into()),
//! #             ..ObjectMeta::default()
//! #         },
//! #         ..ConfigMap::default()
//! #     })
//! # }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cache: Indexer<ConfigMap> = Indexer::new(Indexers::new().with_namespace());
//! cache.add(config_map("gone", "1"))?;
//! let fifo = InOrderFifo::default();
//! fifo.replace(vec![config_map("a", "2")], "2".into())?;
//! fifo.update(config_map("a", "3"))?;
//! fifo.close();
//!
//! let mut tombstones = 0;
//! while let Ok(applied) = fifo
//!     .pop_batch(1000, |batch| {
//!         for item in batch {
//!             match item {
//!                 Item::Deltas(deltas) => {
//!                     let (key, deltas) = deltas.into_parts();
//!                     for delta in deltas {
//!                         match delta {
//!                             Delta::Deleted(_) => {
//!                                 cache.delete_key(&key);
//!                             }
//!                             Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj)
//!                             | Delta::Sync(obj) => {
//!                                 cache.put(&key, obj)?;
//!                             }
//!                         }
//!                     }
//!                 }
//!                 Item::Replaced(list) => {
//!                     for tombstone in list.deletions(&cache) {
//!                         cache.delete_key(&tombstone.key);
//!                         tombstones += 1;
//!                     }
//!                     for (key, obj) in list.into_objects() {
//!                         cache.put(&key, obj)?;
//!                     }
//!                 }
//!                 Item::Resync => {}
//!             }
//!         }
//!         Ok::<_, indexer::Error>(())
//!     })
//!     .await
//! {
//!     applied?;
//! }
//! assert!(fifo.has_synced());
//! assert_eq!(tombstones, 1);
//! assert_eq!(cache.len(), 1);
//! assert_eq!(fifo.synced_resource_version(), "3");
//! # Ok(())
//! # }
//! ```
//!
//! # Errors
//!
//! Writes through [`Store`](indexer::Store) fail with [`indexer::Error`] when an object has no
//! key or the transform rejects it, and then queue nothing: a failing `replace` leaves the queue
//! as it was (it is atomic; in a paged replace, a failing page queues nothing of that page). The reflector reports such errors to its error handler and then relists,
//! which hands the store the whole state again (objects without a name are skipped earlier).
//! [`DeltaFifo::pop`] and [`InOrderFifo::pop_batch`] fail only with [`Error::Closed`], once the
//! fifo was closed and drained: the consumer should stop.

mod backlog;
mod batch;
mod cache_line;
mod delta;
mod delta_fifo;
mod error;
mod in_order_fifo;
mod in_order_queue;
mod options;
mod paged_replace;
mod pop_wait;
mod queue;
mod queue_lock;
mod queue_state;
mod slow_pop;
mod sync_points;
mod synced;

pub use batch::{Batch, Item, Replacement};
pub use delta::{
    DeletedFinalStateUnknown, DeletedObject, Delta, DeltaType, Deltas, DeltasIntoIter, DeltasIter,
};
pub use delta_fifo::DeltaFifo;
pub use error::Error;
pub use in_order_fifo::InOrderFifo;
pub use options::{DeltaFifoOptions, InOrderFifoOptions, TransformFn};
pub use queue::Queue;
