//! The manager: one client and one set of shared informers for every controller, and the run
//! from cache sync to graceful shutdown.
//!
//! - `builder.rs`: [`ManagerBuilder`] (configuration) and `build`; `readiness.rs`: the built-in
//!   health and readiness checks.
//! - `running.rs`: [`Manager`] and [`start`](Manager::start); `supervisor.rs`: running the
//!   [`Runnable`]s (`runnable.rs`) and draining them.
//! - `cache.rs`: [`Cache`] and the manager's shared informers; `metadata.rs`: their
//!   metadata-only counterparts (`Manager::metadata_informer`, `Cache::metadata_lister`).
//! - `shutdown.rs`: [`ShutdownHandle`] and the signal listener.

pub(crate) mod builder;
pub(crate) mod cache;
mod metadata;
mod readiness;
pub(crate) mod runnable;
pub(crate) mod running;
pub(crate) mod shutdown;
mod supervisor;

pub use builder::{DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use cache::Cache;
pub use runnable::Runnable;
pub use running::Manager;
pub use shutdown::ShutdownHandle;
