//! Controllers: watches that turn events into keys, a rate-limited queue, and workers that
//! hand each key to your [`Reconciler`].
//!
//! # Building one
//!
//! `Controller::new(&manager)` then [`for_`](Controller::for_) the primary kind (exactly once)
//! and any number of [`owns`](ControllerBuilder::owns) (enqueues the owner named by a child's
//! *controller* owner reference), [`watches`](ControllerBuilder::watches) (a mapper from an
//! object to the keys it concerns) and [`watches_stream`](ControllerBuilder::watches_stream)
//! (keys from outside the cluster). What each watch watches, and how, is a [`Watch`] value:
//! a typed kind ([`Watch::of::<K>()`](Watch::of)), its metadata only
//! ([`Watch::of::<Metadata<K>>()`](Watch::of), cached as `PartialObjectMeta<K>`), or a kind
//! known only at run time ([`Watch::dynamic`]), each with its [`predicate`]s. The primary kind
//! can be any of the three; the reconciler is a `Reconciler<T>` of its object type.
//!
//! ```
//! # use controller_runtime::cache::Metadata;
//! # use controller_runtime::controller::{Action, Context, Controller, Error, Request, Watch, predicate::GenerationChanged, reconciler_fn};
//! # use controller_runtime::manager::Manager;
//! # use k8s_openapi::api::{apps::v1::Deployment, core::v1::{ConfigMap, Secret}};
//! # fn wire(manager: &Manager) -> Result<(), Error> {
//! Controller::new(manager)
//!     .for_(Watch::of::<Deployment>().predicate(GenerationChanged))
//!     .owns(Watch::of::<Metadata<Secret>>())
//!     .watches(Watch::of::<ConfigMap>(), |cm: &ConfigMap| {
//!         // The Deployment of the same name as the ConfigMap.
//!         controller_runtime::ObjectKey::new(cm.metadata.namespace.as_deref(), cm.metadata.name.as_deref().unwrap_or_default()).ok()
//!     })
//!     .max_concurrent_reconciles(4)
//!     .build(reconciler_fn(|_request: Request, _ctx: Context<Deployment>| async {
//!         Ok::<_, Error>(Action::done())
//!     }))?;
//! # Ok(())
//! # }
//! ```
//!
//! Other settings: a unique [`named`](ControllerBuilder::named), filters on every watch's
//! metadata ([`with_event_filter`](ControllerBuilder::with_event_filter)),
//! `max_concurrent_reconciles` (default 1), a [`rate_limiter`](ControllerBuilder::rate_limiter)
//! (default: workqueue's controller limiter), the queue
//! ([`priority_queue`](ControllerBuilder::priority_queue), on by default), a
//! [`debounce`](ControllerBuilder::debounce), a reconcile timeout, the RBAC rules its writes
//! need ([`permissions`](ControllerBuilder::permissions)). The built [`ControllerHandle`] has
//! the controller's counters and [`enqueue`](ControllerHandle::enqueue) for keys from anywhere.
//!
//! # A small operator
//!
//! Every ConfigMap gets a Secret with the same data, owned by the ConfigMap (so the garbage
//! collector deletes it with its owner, and deleting the Secret makes the operator recreate
//! it). Run here against the in-process `apiserver-sim`; against a cluster, build the manager
//! with [`Manager::try_default`](crate::manager::Manager::try_default) instead.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use controller_runtime::prelude::*;
//! use controller_runtime::util::create_or_update;
//! use k8s_openapi::ByteString;
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! use kube::Api;
//!
//! struct MirrorToSecret;
//!
//! impl Reconciler<ConfigMap> for MirrorToSecret {
//!     type Error = ReconcileError;
//!
//!     async fn reconcile(&self, req: Request, ctx: Context<ConfigMap>) -> Result<Action, ReconcileError> {
//!         // Gone: the garbage collector deletes the Secret it owned.
//!         let Some(config) = ctx.get() else { return Ok(Action::done()) };
//!         let data: BTreeMap<String, ByteString> = config
//!             .data
//!             .iter()
//!             .flatten()
//!             .map(|(key, value)| (key.clone(), ByteString(value.clone().into_bytes())))
//!             .collect();
//!         let secrets: Api<Secret> = Api::namespaced(ctx.client().clone(), req.namespace().unwrap_or("default"));
//!         let mut owner_error = None;
//!         create_or_update(&secrets, req.name(), |secret| {
//!             secret.data = Some(data);
//!             owner_error = set_controller_reference(config.as_ref(), secret).err();
//!         })
//!         .await?;
//!         match owner_error {
//!             // Another controller owns a Secret of this name: retrying cannot fix that.
//!             Some(error) => Err(ReconcileError::terminal(error)),
//!             None => Ok(Action::done()),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = apiserver_sim::ApiServer::start().await?;
//! # let client = server.client()?;
//! let manager = Manager::builder(client).build();
//! Controller::new(&manager)
//!     .for_(Watch::of::<ConfigMap>())
//!     .owns(Watch::of::<Secret>())
//!     .build(MirrorToSecret)?;
//!
//! let shutdown = manager.shutdown_handle();
//! let running = tokio::spawn(async move { manager.start().await });
//! # let mut config = ConfigMap::default();
//! # config.metadata.namespace = Some("default".into());
//! # config.metadata.name = Some("settings".into());
//! # config.data = Some([("mode".to_string(), "fast".to_string())].into());
//! # server.create(&config)?;
//! # let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
//! # while server.list::<Secret>().is_empty() {
//! #     assert!(tokio::time::Instant::now() < deadline, "the operator did not create the secret");
//! #     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
//! # }
//! # assert_eq!(server.list::<Secret>()[0].data.as_ref().unwrap()["mode"].0, b"fast");
//! // ... until SIGINT/SIGTERM, or:
//! shutdown.shutdown();
//! running.await??;
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Reconciling
//!
//! A [`Reconciler`] (a native async trait: implement it with an `async fn`; or
//! [`reconciler_fn`] for a closure) gets a [`Request`] (the object's key) and a [`Context`]:
//! the cached object ([`Context::get`]) or — once it is gone — its last known state
//! ([`Context::deleted`]), the client, the manager's [cache](crate::cache), an event recorder
//! ([`Context::normal_event`]) and write methods that keep read-your-own-writes. It returns an
//! [`Action`] — [`done`](Action::done), [`requeue`](Action::requeue) after the key's backoff,
//! [`requeue_after`](Action::requeue_after) a delay, each optionally
//! [`with_priority`](Action::with_priority) — or a [`ReconcileError`], which may be
//! [terminal](ReconcileError::terminal).
//!
//! Event handlers only enqueue keys; one queue per controller; workers start after every
//! informer handler the controller registered has synced; the same key is never reconciled by
//! two workers at once. After a reconcile: `done` → `forget`; `requeue_after(d)` → `forget`
//! then `add_after(d)`; `requeue` → `add_rate_limited`; an error → `add_rate_limited`, unless
//! terminal (not retried, counted); a panic is caught, logged, counted and treated as an error;
//! a reconcile over its timeout is cancelled and treated as an error. Counters are in
//! [`ControllerHandle::stats`]. Every reconcile runs in a `reconcile` tracing span with the
//! controller name, the key and a unique reconcile id.
//!
//! # Priorities
//!
//! The queue is workqueue's priority queue unless
//! [`priority_queue(false)`](ControllerBuilder::priority_queue) keeps the plain one, as in
//! controller-runtime from v0.23: the adds of an informer's initial list and resyncs (updates
//! with an unchanged resourceVersion) are queued at [`Priority::LOW`], every other event at
//! [`Priority::NORMAL`], so after a restart or a resync of a big cluster a real change does not
//! wait behind thousands of keys that need nothing. A requeue or retry keeps the priority its
//! key was handed out with, unless the [`Action`] names one; an item added again while it waits
//! keeps the higher priority and the earlier ready time. An external source's keys take its
//! [`KeyStream::priority`].
//!
//! # External sources and debounce
//!
//! [`watches_stream`](ControllerBuilder::watches_stream) and [`ControllerHandle::enqueue`] bring
//! keys from outside the cluster's watches; they pass no predicate but keep the queue's dedup
//! and rate limiting. A stream's errors and its end are logged and counted
//! ([`ControllerStats::source_errors`], [`ControllerStats::sources_ended`]). With
//! [`debounce(quiet, max_wait)`](ControllerBuilder::debounce), a key's events are held until
//! none came for `quiet`, but never longer than `max_wait`.
//!
//! # Read-your-own-writes
//!
//! Writes to the primary object made through [`Context::replace`],
//! [`Context::replace_status`], [`Context::patch`] or [`Context::patch_status`] record the
//! returned `resourceVersion`; the next reconcile of that key first waits (default at most 5 s,
//! [`ControllerBuilder::read_your_writes_timeout`]) until the cached object is at least that
//! version or its deletion was seen. So a reconciler never acts on a cache older than its own
//! last write to that object, unless the wait timed out (logged as a warning). Writes through a
//! plain `kube::Api` are not tracked.
//!
//! # Errors
//!
//! [`Error`] from [`ControllerBuilder::build`] is a configuration problem (an invalid setting,
//! a name already taken, contradictory cache settings of a watched kind) or a manager that has
//! stopped; from a running controller, handlers that did not sync in time. A reconcile's own
//! error is never an [`Error`]: it is logged, counted and retried.

mod action;
mod build;
mod builder;
mod context;
mod debounce;
mod enqueue;
mod error;
mod events;
mod handle;
mod handlers;
mod host;
mod intake;
pub mod predicate;
mod reconciler;
mod registered;
mod ryow;
mod shard;
mod shard_kinds;
mod source;
mod state;
mod stats;
mod watch;
mod worker;

pub use action::Action;
pub use builder::{Controller, ControllerBuilder, DEFAULT_MAX_CONCURRENT_RECONCILES};
pub use context::Context;
pub use error::Error;
pub use handle::ControllerHandle;
pub(crate) use host::{Host, Teardown};
pub use reconciler::{FnReconciler, ReconcileError, Reconciler, Request, reconciler_fn};
pub use ryow::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
pub(crate) use shard::{KindToShard, ObjectCount, ShardGuard, ShardHost, ShardRole, Verdict};
pub use source::{KeyStream, SourceError, SourceItem};
pub use stats::ControllerStats;
pub use watch::Watch;
/// The priority of a key in a controller's queue (higher first); see
/// [`ControllerBuilder::priority_queue`].
pub use workqueue::Priority;
