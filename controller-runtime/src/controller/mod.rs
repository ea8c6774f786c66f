//! Controllers: the builder that wires watches and predicates to a workqueue, the workers that
//! reconcile what the queue hands out, and what a reconcile sees.
//!
//! - `builder.rs`: [`Controller`], [`ControllerBuilder`], [`ControllerHandle`];
//!   `handlers.rs`: the event handlers that turn watch events into queue keys.
//! - `worker.rs`: the running controller (handler sync, workers, outcome of each reconcile);
//!   `state.rs`: what its handlers and workers share; `stats.rs`: [`ControllerStats`].
//! - `reconciler.rs`: [`Reconciler`], [`Request`], [`Action`], [`ReconcileError`];
//!   `context.rs`: [`Context`]; `ryow.rs`: read-your-own-writes; `predicate.rs`: predicates.

pub(crate) mod builder;
pub(crate) mod context;
pub(crate) mod handlers;
pub mod predicate;
pub(crate) mod reconciler;
pub(crate) mod ryow;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod worker;

pub use builder::{
    Controller, ControllerBuilder, ControllerHandle, DEFAULT_MAX_CONCURRENT_RECONCILES,
};
pub use context::Context;
pub use reconciler::{Action, FnReconciler, ReconcileError, Reconciler, Request, reconciler_fn};
pub use ryow::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
pub use stats::ControllerStats;
