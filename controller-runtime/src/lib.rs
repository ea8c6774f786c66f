//! The top of the stack: a [`Manager`](manager::Manager) that owns the client and the
//! [cache], and [`Controller`](controller::Controller)s that turn watch events into
//! reconciles of your [`Reconciler`](controller::Reconciler) through a rate-limited workqueue —
//! controller-runtime's model, on this workspace's `informer`, `workqueue` and `indexer` crates.
//! A controller reconciling Deployments and the ConfigMaps they own:
//!
//! ```no_run
//! use controller_runtime::prelude::*;
//! use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
//!
//! async fn reconcile(_req: Request, ctx: Context<Deployment>) -> Result<Action, ReconcileError> {
//!     let Some(deployment) = ctx.get() else { return Ok(Action::done()) }; // gone
//!     let settings = ctx.cache().get::<ConfigMap>(ctx.key())?; // the ConfigMap of the same name
//!     ctx.normal_event("Seen", format!("settings: {}", settings.is_some()));
//!     # let _ = deployment;
//!     Ok(Action::done())
//! }
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let manager = Manager::try_default().await?;
//! Controller::new(&manager)
//!     .for_(Watch::of::<Deployment>())
//!     .owns(Watch::of::<ConfigMap>())
//!     .build(reconciler_fn(reconcile))?;
//! manager.start().await?; // until SIGINT or SIGTERM
//! # Ok(())
//! # }
//! ```
//!
//! # The modules
//!
//! | module | what it holds |
//! |---|---|
//! | [`controller`] | the controller builder and its [`Watch`](controller::Watch)es (typed, metadata-only, dynamic), the [`Reconciler`](controller::Reconciler), [`Context`](controller::Context) (client, caches, writes recorded so no reconcile starts from a cache older than them: Kubernetes 1.36's staleness mitigation), warm replicas (caches filled before leading), [`Action`](controller::Action), [`predicate`](controller::predicate)s, the priority queue (initial lists and resyncs at low priority), debounce, external sources |
//! | [`cache`] | what a reconcile reads: listers, `Result<Option<_>>` getters, label selectors, field indexes; per-kind settings (`ByObject`: namespaces, selectors, transforms); typed, metadata-only and dynamic kinds; lazy informers and kinds installed late |
//! | [`manager`] | the manager: configuration, start and graceful shutdown on SIGINT/SIGTERM, runnables (also added to and removed from a running manager), probes, the addresses of its servers |
//! | [`util`] | what reconcilers call: owner references, `create_or_update`, server-side apply, finalizers (with what happens to the cleanup's result), status conditions |
//! | [`events`] | Kubernetes events: `ctx.normal_event(..)`, `ctx.warning_event(..)`, the recorder |
//! | [`leader_election`] | client-go's leader election on Leases |
//! | [`metrics`] | controller-runtime's Prometheus metrics |
//! | [`rbac`] | least-privilege roles generated from what the manager runs |
//! | [`sharding`] | a controller spread over replicas that all work at once, run by the manager ([`ManagerBuilder::sharding`](manager::ManagerBuilder::sharding)): the consistent-hash ring, shard Leases and their states, the drain handshake, the sharder and its assignment webhook |
//! | [`webhook`] | admission and conversion webhooks (feature `webhook`, on by default): typed validators and defaulters, raw handlers, hub-and-spoke conversion, an HTTPS server whose certificate reloads, the webhook configurations that route to it |
//!
//! The modules depend on each other one way, from the top down: [`manager`] uses
//! [`sharding`], which uses [`controller`] (the narrow interface a controller sees a sharded
//! manager through: the shard guard asked before each reconcile) and [`webhook`]; [`controller`]
//! uses [`cache`] and [`events`]; these use the primitives at the bottom — leader election,
//! metrics, health, the [`Runnable`](manager::Runnable) trait (all private module `ops`), the
//! [`rbac`] rules and the kinds. [`util`] uses only the kinds. A controller knows its manager
//! only through the interface the manager implements for it, so every module below
//! [`manager`] can be read and changed without it.
//!
//! [`prelude`] brings the dozen names a first operator needs. Each module's page is its part of
//! the guide, with its own `Error` (each converts into the crate's [`Error`], for code that mixes
//! modules); [`controller`] has a whole operator run against the
//! in-process API server. Testing an operator: the `kube-rt-testenv` crate (an in-process API
//! server with your CRDs), described in the repository's README.

pub mod cache;
pub mod controller;
mod error;
pub mod events;
mod kind;
pub mod manager;
mod ops;
pub mod prelude;
pub mod rbac;
pub mod sharding;
pub mod util;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use error::Error;
pub use ops::{leader_election, metrics};

/// An object's namespace (if namespaced) and name: what a controller reconciles.
pub use indexer::ObjectKey;

/// The layers below, for their types and for using them directly: the cache and its indices
/// ([`indexer`]), shared informers and their handlers ([`informer`]), work queues and rate
/// limiters ([`workqueue`]).
pub use {indexer, informer, workqueue};
