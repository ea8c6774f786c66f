//! controller-runtime (placeholder tour, replaced below).

#![deny(missing_docs)]

mod apply;
mod cache;
mod context;
mod controller;
mod error;
mod finalizer;
mod manager;
mod owner;
pub mod predicate;
mod reconciler;
mod runnable;
mod ryow;
mod scope;
mod shutdown;
mod stats;
mod worker;

pub use apply::{OperationResult, create_or_update, server_side_apply};
pub use cache::Cache;
pub use context::Context;
pub use controller::{
    Controller, ControllerBuilder, ControllerHandle, DEFAULT_MAX_CONCURRENT_RECONCILES,
};
pub use error::Error;
pub use finalizer::{FinalizerEvent, finalizer};
pub use manager::{
    DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, Manager, ManagerBuilder,
};
pub use owner::{get_controller_of, is_controlled_by, set_controller_reference};
pub use predicate::Predicate;
pub use reconciler::{Action, FnReconciler, ReconcileError, Reconciler, Request, reconciler_fn};
pub use runnable::Runnable;
pub use ryow::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
pub use scope::WatchScope;
pub use shutdown::ShutdownHandle;
pub use stats::ControllerStats;

pub use indexer::{Lister, ObjectKey};
pub use informer::{Object, Selectors};
