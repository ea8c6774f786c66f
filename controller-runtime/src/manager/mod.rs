//! The manager (controller-runtime's `pkg/manager`): one client and one [cache](crate::cache)
//! for every controller, the [`Runnable`]s it runs, and its life from cache sync to graceful
//! shutdown.
//!
//! # Configuring and starting
//!
//! [`Manager::builder`] takes a client (or [`Manager::try_default`] infers one, with the
//! defaults); the [`ManagerBuilder`] sets what is cached (namespaces, per-kind
//! [`ByObject`](crate::cache::ByObject) settings, managed fields stripped by default), the
//! timeouts, leader election, the metrics, probe and webhook servers. [`Manager::start`] starts
//! the informers, waits for their caches (default 2 min; the error names the informer that did
//! not sync), runs the controllers and other runnables, and returns on SIGINT/SIGTERM, a
//! cancellation token or a [`ShutdownHandle`] request: the first request stops intake and
//! drains in-flight reconciles (default 30 s), a second one returns at once.
//!
//! ```no_run
//! # use controller_runtime::manager::{Error, Manager};
//! # use controller_runtime::leader_election::LeaderElectionConfig;
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let manager = Manager::builder(kube::Client::try_default().await?)
//!     .leader_election(LeaderElectionConfig::new("operators", "my-operator"))
//!     .health_probe_bind_address("0.0.0.0:8081".parse()?)
//!     .metrics_bind_address("0.0.0.0:8080".parse()?)
//!     .build();
//! // ... build controllers on it, then:
//! manager.start().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Controllers and runnables can also be added to a running manager (a kind installed late:
//! [`Cache::wait_for_kind`](crate::cache::Cache::wait_for_kind), then build the controller) and
//! removed again ([`Manager::remove_controller`]: its workers drain, its handlers go, and the
//! informers of kinds nothing else watches stop).
//!
//! # Operations
//!
//! - **Leader election** ([`ManagerBuilder::leader_election`]): client-go's protocol on a
//!   `coordination.k8s.io/v1` Lease (see [`leader_election`](crate::leader_election)).
//!   Controllers run only while the manager leads; a leader that cannot renew by its renew
//!   deadline aborts them at once and [`Manager::start`] returns [`Error::LeadershipLost`]; a
//!   graceful shutdown releases the lease.
//! - **Metrics** ([`Manager::metrics`], see [`metrics`](crate::metrics)) on `/metrics`, and
//!   **probes** on `/healthz` and `/readyz` with [`Manager::add_healthz_check`] and
//!   [`Manager::add_readyz_check`] (`/readyz` includes the caches' sync, leader election and,
//!   with a webhook server, `webhook`); [`Manager::addresses`] tells where they listen.
//! - **RBAC** ([`Manager::rbac_policy`], see [`rbac`](crate::rbac)): the least-privilege roles
//!   generated from what the manager caches and runs and what its controllers declare.
//! - **Sharding** ([`ManagerBuilder::sharding`]): every replica works at once, each on the
//!   objects a consistent-hash ring assigns to it (see [`sharding`](crate::sharding)).
//! - **Webhooks** ([`ManagerBuilder::webhook_server`], feature `webhook`): served on every
//!   replica, leader or not, from before the caches sync (see [`webhook`](crate::webhook)).
//!
//! The repository's `docs/operations.md` lists every metric and explains the tuning.
//!
//! # Errors
//!
//! [`Error`] from [`Manager::start`] and the builders is a configuration or start-up problem
//! (invalid cache or leader-election settings, a bind address in use, caches that did not sync
//! in time — named) or the end of the manager's run ([`Error::LeadershipLost`], a failed
//! runnable, a forced shutdown); none is retried. Watch and list failures never surface here:
//! the informers' reflectors retry them.

mod builder;
mod controllers;
mod error;
mod host;
mod rbac;
mod readiness;
mod removable;
mod running;
mod shutdown;
mod state;
mod supervisor;
#[cfg(feature = "webhook")]
mod webhooks;

pub use crate::ops::health::ping;
pub use crate::ops::runnable::Runnable;
pub use builder::{DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use error::Error;
pub use running::{Addresses, Manager};
pub use shutdown::ShutdownHandle;

/// Re-exported so [`Runnable`]s can be implemented without depending on `async-trait` (the
/// manager keeps them as trait objects, so their futures are boxed; a
/// [`Reconciler`](crate::controller::Reconciler) is a native async trait).
pub use async_trait::async_trait;
