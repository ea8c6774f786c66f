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
//! ([`Context::normal_event`]) and write methods that record the controller's own writes (see
//! staleness below). It returns an
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
//! # Staleness: reading your own writes
//!
//! A reconcile never starts from a cache older than the controller's own earlier writes for
//! its key — Kubernetes 1.36's staleness mitigation (KEP-5647), as its DaemonSet, StatefulSet,
//! ReplicaSet and Job controllers do it. Each write a reconcile makes through its [`Context`] —
//! [`replace`](Context::replace), [`replace_status`](Context::replace_status),
//! [`patch`](Context::patch) and [`patch_status`](Context::patch_status) of the primary object,
//! [`create`](Context::create), [`patch_object`](Context::patch_object) and
//! [`delete_object`](Context::delete_object) of any typed kind, or any write passed to
//! [`Context::wrote`] — records the returned `resourceVersion` against the informers of the
//! written object's kind that the controller watches (for its namespace): the primary kind, a
//! kind it [`owns`](ControllerBuilder::owns) or [`watches`](ControllerBuilder::watches). Before
//! the key's next reconcile, each of those informers'
//! [last store sync version](informer::SharedIndexInformer::last_store_sync_resource_version)
//! (watch bookmarks included) must have reached the highest version written through it. If
//! one has not, the reconcile is *skipped* — not run, counted in
//! [`ControllerStats::stale_skips`] and `controller_runtime_stale_sync_skips_total` — and the
//! key goes back to the queue as soon as one of the controller's informers applies a change
//! that catches it up, or after a short backoff (10 ms, doubling up to 1 s), whichever comes
//! first; a skip holds no worker. Versions compare as integers, as KEP-5647 allows; a version
//! that is not an integer is caught up only when seen exactly. The primary object's deletion
//! ends its key's claims. `controller_runtime_stale_informer_lag` shows, per controller and
//! informer, how far the cache is behind the newest write still waited for.
//!
//! This replaces the framework's earlier read-your-own-writes, which tracked writes to the
//! primary object only and made the next reconcile *wait*, holding its worker, until the cached
//! primary object's own `resourceVersion` reached the written one. What it guaranteed still
//! holds — the cached primary object is at least as new as the controller's writes to it,
//! unless the wait is given up or the object was deleted — and more: the guarantee now covers
//! the owned and watched objects it wrote (a child just created is in the cache when the owner
//! is reconciled next), and it is one informer-wide check rather than one object's version.
//! What changed: a stale key is skipped and requeued instead of waited on, so workers stay free
//! for other keys; and the bound,
//! [`read_your_writes_timeout`](ControllerBuilder::read_your_writes_timeout) (still 5 s by
//! default), now counts from the key's first skip: after it the reconcile runs anyway (logged as
//! a warning), so a write the informer can never see (outside the cached namespaces or
//! selectors) does not stall its key. Writes through a plain `kube::Api` are not recorded
//! unless passed to [`Context::wrote`].
//!
//! # Warm replicas
//!
//! With leader election, a controller built with [`warm_up(true)`](ControllerBuilder::warm_up)
//! (or in a manager built with
//! [`warm_up_before_leadership(true)`](crate::manager::ManagerBuilder::warm_up_before_leadership),
//! the default of its controllers) starts, on a replica that does not lead, the informers of the
//! kinds it watches, its external sources and its debouncer: its caches fill and its queue with
//! them. Only its workers wait for leadership, so when this replica takes over it reconciles at
//! once from warm caches, without a list (controller-runtime's warm replicas,
//! kubernetes-sigs/controller-runtime#3192). Off by default, as in controller-runtime: a warm
//! standby watches everything the leader watches.
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
mod resource_version;
mod shard;
mod shard_kinds;
mod source;
mod staleness;
mod state;
mod stats;
mod warm_up;
mod watch;
mod worker;

pub use action::Action;
pub use builder::{Controller, ControllerBuilder, DEFAULT_MAX_CONCURRENT_RECONCILES};
pub use context::Context;
pub use error::Error;
pub use handle::ControllerHandle;
pub(crate) use host::{Host, Teardown};
pub use reconciler::{FnReconciler, ReconcileError, Reconciler, Request, reconciler_fn};
pub(crate) use shard::{KindToShard, ObjectCount, ShardGuard, ShardHost, ShardRole, Verdict};
pub use source::{KeyStream, SourceError, SourceItem};
pub use staleness::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
pub use stats::ControllerStats;
pub use watch::Watch;
/// The priority of a key in a controller's queue (higher first); see
/// [`ControllerBuilder::priority_queue`].
pub use workqueue::Priority;
