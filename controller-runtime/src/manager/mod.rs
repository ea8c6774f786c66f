//! The manager: one client and one set of shared informers for every controller, and the run
//! from cache sync to graceful shutdown.
//!
//! - `builder.rs`: [`ManagerBuilder`] (configuration) and `build`; `readiness.rs`: the built-in
//!   health and readiness checks.
//! - `running.rs`: [`Manager`] and [`start`](Manager::start); `supervisor.rs`: running the
//!   [`Runnable`]s (`runnable.rs`) and draining them.
//! - `cache.rs`: [`Cache`] and the registry of every kind's cache; `kind_cache.rs`: one kind's
//!   logical cache (one informer per cached namespace, or one); `lister.rs`: [`CacheLister`];
//!   `options.rs`: default namespaces and per-kind settings ([`ByObject`]); `field_index.rs`:
//!   field indexes (`Manager::index_field`); `metadata.rs`: the metadata-only caches
//!   (`Manager::metadata_informer`, `Cache::metadata_lister`).
//! - `controllers.rs`: adding runnables and controllers (also to a running manager), removing
//!   a controller, waiting for a kind to be served; `removable.rs`: a runnable stopped alone.
//! - `shutdown.rs`: [`ShutdownHandle`] and the signal listener.
//! - `rbac.rs`: the RBAC rules the manager needs ([`Manager::rbac_policy`]).

pub(crate) mod builder;
pub(crate) mod cache;
pub(crate) mod controllers;
mod field_index;
pub(crate) mod kind_cache;
pub(crate) mod lister;
mod metadata;
pub(crate) mod options;
mod rbac;
mod readiness;
mod removable;
pub(crate) mod runnable;
pub(crate) mod running;
pub(crate) mod shutdown;
mod supervisor;

pub use builder::{DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use cache::Cache;
pub use lister::{CacheLister, NamespacedCacheLister};
pub use options::ByObject;
pub use runnable::Runnable;
pub use running::Manager;
pub use shutdown::ShutdownHandle;
