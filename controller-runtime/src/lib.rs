//! The top of the stack: a [`Manager`] that owns the client and the shared informers, and
//! [`Controller`]s that turn watch events into reconciles of a [`Reconciler`] through a
//! rate-limited workqueue — controller-runtime's model, built on this workspace's `informer`,
//! `workqueue` and `indexer` crates.
//!
//! # The pieces
//!
//! - [`Manager`] ([`Manager::builder`], or [`Manager::try_default`] for the defaults and a
//!   client inferred from the environment): one `InformerFactory` shared by every controller (one
//!   watch and one cache per type), namespace scoping, per-type [`Selectors`], `managedFields`
//!   stripped from cached objects by default. [`Manager::start`] starts the informers, waits for
//!   their caches (default 2 min; the error names the informer that did not sync), runs the
//!   controllers and other [`Runnable`]s, and returns on SIGINT/SIGTERM, a cancellation token or
//!   a [`ShutdownHandle`] request: the first request stops intake and drains in-flight
//!   reconciles (default 30 s), a second one returns at once.
//! - [`Controller`]: `Controller::new(&manager).for_::<K>()` (the primary type, exactly once —
//!   the builder has no second `for_`), [`owns`](ControllerBuilder::owns) (enqueues the owner
//!   named by a child's *controller* reference, matching kind and API group),
//!   [`watches`](ControllerBuilder::watches) (any mapping to requests), [`predicate`]s per watch
//!   on the whole object ([`for_with`](Controller::for_with),
//!   [`owns_with`](ControllerBuilder::owns_with), [`watches_with`](ControllerBuilder::watches_with))
//!   and for all watches on metadata ([`with_event_filter`](ControllerBuilder::with_event_filter)),
//!   metadata-only watches ([`owns_metadata`](ControllerBuilder::owns_metadata),
//!   [`watches_metadata`](ControllerBuilder::watches_metadata) and their `_with` variants, below),
//!   external sources ([`watches_stream`](ControllerBuilder::watches_stream): any
//!   `futures::Stream` of keys — a channel, a timer, a message bus),
//!   `max_concurrent_reconciles` (default 1), a rate limiter (default: workqueue's
//!   controller limiter), the queue ([`priority_queue`](ControllerBuilder::priority_queue), on
//!   by default), an optional [`debounce`](ControllerBuilder::debounce), a unique name, an
//!   optional reconcile timeout. The built [`ControllerHandle`] has the controller's counters
//!   and [`enqueue`](ControllerHandle::enqueue) for keys from anywhere.
//! - [`Reconciler`] (a native async trait: implement it with an `async fn`; or
//!   [`reconciler_fn`] for a closure) gets a [`Request`] (the object's
//!   [`ObjectKey`]) and a [`Context`] (client, cache, the primary object or — once it is gone — its
//!   last known state, the key's [`Priority`]) and returns an [`Action`] or a
//!   [`ReconcileError`], which may be [terminal](ReconcileError::terminal).
//! - [`Recorder`] ([`Context::recorder`]): events on `events.k8s.io/v1`, repeats folded into a
//!   series with a count, published through a bounded queue that drops (and counts) rather than
//!   block a reconcile.
//! - Helpers: [`set_controller_reference`], [`is_controlled_by`], [`get_controller_of`];
//!   [`finalizer`]; [`create_or_update`] and [`server_side_apply`].
//! - [`Kind`]: the one bound on the object types all of these take — any `k8s-openapi` type or
//!   `#[derive(CustomResource)]` type.
//! - Webhooks ([`webhook`], feature `webhook`, on by default): a [`WebhookServer`] that the
//!   manager runs ([`ManagerBuilder::webhook_server`]) before its caches sync and on every
//!   replica, over HTTPS with the certificate re-read from its directory. Register typed
//!   [`Validator`]s and [`Defaulter`]s (the server computes the defaulter's JSON patch), raw
//!   handlers on kube's admission types, and hub-and-spoke [`Conversion`]s of a CRD's versions
//!   with [`Manager::add_webhook`] and [`Manager::add_conversion`]; the webhook configurations
//!   and a CRD's `spec.conversion` that route to them are generated from the registrations.
//!
//! # Reading the cache
//!
//! A reconcile reads other objects from the manager's caches, not from the API server: by key
//! with [`Cache::get`], or through a [`Lister`] by namespace and label selector. The kind must be
//! watched — the primary kind, an [`owns`](ControllerBuilder::owns) or
//! [`watches`](ControllerBuilder::watches) kind, or one requested with [`Manager::informer`]
//! before `start` — otherwise [`Cache::lister`] is [`Error::NotCached`]. Selectors are kube's
//! label [`Selector`](kube::core::Selector): from `(key, value)` pairs, or from
//! [`Expression`](kube::core::Expression)s.
//!
//! ```no_run
//! use kube_rt_controller_runtime::{Context, Error};
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::ResourceExt;
//! use kube::core::{Expression, Selector};
//!
//! fn pods_of(ctx: &Context<Deployment>, app: &str) -> Result<Vec<String>, Error> {
//!     let namespace = ctx.key().namespace().unwrap_or("default");
//!     // app=<app>, and a tier label that is not "db".
//!     let mut selector: Selector = [("app".to_owned(), app.to_owned())].into_iter().collect();
//!     selector.extend([Expression::NotEqual("tier".into(), "db".into())]);
//!     let pods = ctx.cache().lister::<Pod>()?.namespace(namespace).list(&selector);
//!     Ok(pods.iter().map(|pod| pod.name_any()).collect())
//! }
//! ```
//!
//! # Layout
//!
//! - `controller/`: the controller — its builder ([`Controller`]), the event handlers that
//!   enqueue keys with their priority, external sources, the debouncer, its queue (priority or
//!   plain), the workers, what a reconcile sees ([`Reconciler`], [`Request`], [`Context`],
//!   read-your-own-writes), [`predicate`]s and [`ControllerStats`].
//! - `manager/`: [`ManagerBuilder`] (the configuration) and the built [`Manager`] (its start,
//!   the supervision of [`Runnable`]s, the built-in readiness checks), [`Cache`] over the shared
//!   informers, [`ShutdownHandle`].
//! - `webhook/`: admission (validator, defaulter, raw), conversion (hub and spoke), the TLS
//!   server and its certificate reload, the configuration objects.
//! - `ops/`: [`leader_election`] (settings, the Lease record, the elector), [`metrics`]
//!   (Prometheus, or no-op without the `metrics` feature), the health checks and the HTTP
//!   server of `/metrics`, `/healthz` and `/readyz`.
//! - At the top: the helpers a reconciler calls, whatever controller runs it —
//!   [`create_or_update`] and [`server_side_apply`] (`apply.rs`), [`finalizer`], owner
//!   references (`owner.rs`), the event [`Recorder`] — the [`Kind`] bound and [`WatchScope`]
//!   (`kind.rs`), and the crate's [`Error`].
//!
//! # Semantics
//!
//! Event handlers only enqueue keys; one workqueue per controller; workers start after every
//! informer handler the controller registered has synced; the same key is never reconciled by two
//! workers at once. After a reconcile: `Ok(Done)` → `forget`; `Ok(RequeueAfter(d))` → `forget`
//! then `add_after(d)`; `Ok(Requeue)` → `add_rate_limited`; an error → `add_rate_limited`, unless
//! terminal (not retried, counted); a panic is caught, logged, counted and treated as an error;
//! a reconcile over its timeout is cancelled and treated as an error. Counters are in
//! [`ControllerHandle::stats`]. Every reconcile runs in a `reconcile` tracing span with the
//! controller name, the key and a unique reconcile id.
//!
//! **Priorities.** The queue is `workqueue`'s priority queue unless
//! [`priority_queue(false)`](ControllerBuilder::priority_queue) keeps the plain one, as in
//! controller-runtime from v0.23: the adds of an informer's initial list and resyncs (updates
//! with an unchanged resourceVersion) are queued at [`Priority::LOW`], every other event at
//! [`Priority::NORMAL`], so after a restart or a resync of a big cluster a real change does not
//! wait behind thousands of keys that need nothing (`priority_latency` in the repository's
//! `docs/benchmarks.md`). A requeue or retry keeps the priority its key was
//! handed out with, unless the [`Action`] names one
//! ([`with_priority`](Action::with_priority)); an item added again while it waits keeps the
//! higher priority and the earlier ready time.
//!
//! **External sources and debounce.** [`watches_stream`](ControllerBuilder::watches_stream)
//! and [`ControllerHandle::enqueue`] bring keys from outside the cluster's watches; they pass
//! no predicate but keep the queue's dedup and rate limiting. A stream's errors and its end are
//! logged and counted ([`ControllerStats::source_errors`],
//! [`ControllerStats::sources_ended`]); the controller runs on with its other sources. With
//! [`debounce(quiet, max_wait)`](ControllerBuilder::debounce), a key's events (watch events
//! and stream keys) are held until none came for `quiet`, but never longer than `max_wait`.
//!
//! **Read-your-own-writes.** Writes to the primary object made through [`Context::replace`],
//! [`Context::replace_status`], [`Context::patch`] or [`Context::patch_status`] record the
//! returned `resourceVersion`; the next reconcile of that key first waits (default at most 5 s,
//! [`ControllerBuilder::read_your_writes_timeout`]) until the cached object is at least that
//! version or its deletion was seen. So a reconciler never acts on a cache older than its own
//! last write to that object, unless the wait timed out (logged as a warning). Writes through a
//! plain `kube::Api` are not tracked.
//!
//! **Metadata-only watches.** An owned or watched type that is only mapped to its owner
//! needs its owner references and labels, not its spec, status or data:
//! `.owns_metadata::<Secret>()` (or [`watches_metadata`](ControllerBuilder::watches_metadata)
//! with a mapper over `PartialObjectMeta<W>`) lists and watches it as `PartialObjectMetadata`
//! and caches `kube::core::PartialObjectMeta<Secret>`, a fraction of a full object's memory
//! (for the repository benchmark's pods, with managedFields stripped as the manager does by
//! default, 2.7 KB per pod against 17.9 KB; `docs/benchmarks.md`); a Secret's data never
//! reaches the process. Predicates are typed over `PartialObjectMeta<W>`; the built-in
//! ones work unchanged. The metadata cache is shared like a full one and scoped the same way
//! (the manager's namespace, the type's selectors); read it with [`Cache::metadata_lister`] and
//! [`Cache::get_metadata`], or get its informer with [`Manager::metadata_informer`]. A type can
//! be watched both ways at once: the two caches are distinct.
//!
//! ```
//! # use kube_rt_controller_runtime::{Action, Context, Controller, Manager, Request, reconciler_fn};
//! # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! # fn wire(manager: &Manager) -> Result<(), kube_rt_controller_runtime::Error> {
//! Controller::new(manager)
//!     .for_::<ConfigMap>()
//!     .owns_metadata::<Secret>()
//!     .build(reconciler_fn(|request: Request, ctx: Context<ConfigMap>| async move {
//!         // The Secret of the same name: its labels and annotations, without its data.
//!         let secret = ctx.cache().get_metadata::<Secret>(&request.key)?;
//!         let _rotated = secret.and_then(|s| s.metadata.annotations.clone());
//!         Ok::<_, kube_rt_controller_runtime::Error>(Action::Done)
//!     }))?;
//! # Ok(())
//! # }
//! ```
//!
//! **Deleted objects.** When the primary object is gone, [`Context::deleted`] holds its last
//! known state (from the delete event, or the tombstone of a deletion missed during a watch gap)
//! until a reconcile of that key succeeds.
//!
//! # Example: a small operator
//!
//! Every ConfigMap gets a Secret with the same data, owned by the ConfigMap (so the garbage
//! collector deletes it with its owner, and deleting the Secret makes the operator recreate it).
//! Run here against the in-process `apiserver-sim`; with a real cluster, use
//! [`Manager::try_default`] (or `Manager::builder(kube::Client::try_default().await?)`).
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use kube_rt_controller_runtime::{
//!     Action, Context, Controller, Manager, ReconcileError, Reconciler, Request, create_or_update,
//!     set_controller_reference,
//! };
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
//!         let Some(config) = ctx.get() else { return Ok(Action::Done) };
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
//!             None => Ok(Action::Done),
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
//!     .for_::<ConfigMap>()
//!     .owns::<Secret>()
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
//! A controller has exactly one primary type; a second `for_` does not compile:
//!
//! ```compile_fail
//! # use kube_rt_controller_runtime::{Controller, Manager};
//! # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! # fn f(manager: &Manager) {
//! Controller::new(manager).for_::<ConfigMap>().for_::<Secret>();
//! # }
//! ```
//!
//! # Errors
//!
//! [`Error`] from [`Manager::start`] and the builders is a configuration or start-up problem
//! (duplicate controller names, invalid settings such as a zero debounce or a source's
//! priority out of range, leader-election timings, a bind address in use, caches that did not
//! sync in time — named) or the end of the manager's run
//! ([`Error::LeadershipLost`], a failed runnable, a forced shutdown); none is retried, so an
//! operator's `main` should exit with it and let its Deployment restart the process, as
//! controller-runtime does. A reconcile's own error is never an [`Error`] of the manager: it is
//! logged, counted, and retried through the rate-limited queue, unless it is
//! [terminal](ReconcileError::terminal) (counted, not retried). Watch and list failures
//! never surface here; the informers' reflectors retry them.
//!
//! # Operations
//!
//! - **Leader election** ([`ManagerBuilder::leader_election`], [`LeaderElectionConfig`]):
//!   client-go's protocol on a `coordination.k8s.io/v1` Lease (15 s / 10 s / 2 s by default).
//!   Controllers run only while the manager leads; a leader that cannot renew by its renew
//!   deadline aborts them at once and [`Manager::start`] returns [`Error::LeadershipLost`]; a
//!   graceful shutdown releases the lease. [`Manager::elector`] exposes the state.
//! - **Metrics** ([`Manager::metrics`], feature `metrics`, on by default): controller-runtime's
//!   `controller_runtime_*`, `workqueue_*` (`workqueue_depth` with its `priority` label) and
//!   `leader_election_master_status` series with the same names and labels, plus informer
//!   statistics; one registry per manager.
//! - **Probes** ([`ManagerBuilder::metrics_bind_address`],
//!   [`ManagerBuilder::health_probe_bind_address`]): `/metrics`, `/healthz`, `/readyz` with
//!   [`Manager::add_healthz_check`] and [`Manager::add_readyz_check`]; with a webhook server,
//!   `/readyz` includes `webhook`.
//!
//! The repository's `docs/operations.md` lists every metric and explains the tuning.

mod apply;
mod controller;
mod error;
mod finalizer;
mod kind;
mod manager;
mod ops;
mod owner;
mod recorder;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use apply::{OperationResult, create_or_update, server_side_apply};
pub use controller::{
    Action, Context, Controller, ControllerBuilder, ControllerHandle, ControllerStats,
    DEFAULT_MAX_CONCURRENT_RECONCILES, DEFAULT_READ_YOUR_WRITES_TIMEOUT, FnReconciler,
    ReconcileError, Reconciler, Request, SourceError, SourceItem, predicate, reconciler_fn,
};
pub use error::Error;
pub use finalizer::{FinalizerEvent, finalizer};
pub use kind::{Kind, WatchScope};
pub use manager::{
    Cache, DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, Manager, ManagerBuilder,
    Runnable, ShutdownHandle,
};
pub use ops::health::{Check, ping};
pub use ops::leader_election::{LeaderElectionConfig, LeaderElector, LeaderState};
pub use ops::metrics::Metrics;
pub use ops::{leader_election, metrics};
pub use owner::{get_controller_of, is_controlled_by, set_controller_reference};
pub use predicate::Predicate;
pub use recorder::{
    DEFAULT_EVENT_QUEUE, EventRecord, EventType, Recorder, RecorderTask, SERIES_WINDOW,
    reference_to,
};
#[cfg(feature = "webhook")]
pub use webhook::{
    Conversion, Convertible, Defaulter, Validator, Webhook, WebhookServer, WebhookServerConfig,
};

/// Re-exported so [`Runnable`]s can be implemented without depending on `async-trait` (the
/// manager keeps them as trait objects, so their futures are boxed; [`Reconciler`] is a native
/// async trait).
pub use async_trait::async_trait;
/// The cache types [`Cache`] and [`Manager::informer`] hand out, re-exported so their pages are
/// one click away.
pub use indexer::{Indexer, Lister, NamespaceLister, ObjectKey};
pub use informer::{Object, Registration, Selectors, SharedIndexInformer};
/// The priority of a key in a controller's queue (higher first); see
/// [`ControllerBuilder::priority_queue`].
pub use workqueue::Priority;
