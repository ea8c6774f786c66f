//! Controllers: the builder that wires watches and predicates to a workqueue, the workers that
//! reconcile what the queue hands out, and what a reconcile sees.
//!
//! - `builder.rs`: [`Controller`], [`ControllerBuilder`]; `handle.rs`: [`ControllerHandle`];
//!   `dynamic.rs`: dynamic primary, owned and watched kinds;
//!   `handlers.rs`: the event handlers that turn watch events into queue keys, with their
//!   priority; `source.rs`: external sources (streams of keys); `intake.rs`: where events and
//!   sources hand in keys; `registered.rs`: the handlers a watch added (and their removal);
//!   `debounce.rs`: the optional debouncer; `queue.rs`: the controller's queue, priority or
//!   plain; `metadata.rs`: metadata-only watches (`owns_metadata`, `watches_metadata`);
//!   `events.rs`: event shorthands on the context.
//! - `worker.rs`: the running controller (sources, handler sync, workers, outcome of each
//!   reconcile); `state.rs`: what its handlers and workers share; `stats.rs`: [`ControllerStats`].
//! - `reconciler.rs`: [`Reconciler`], [`Request`], [`Action`], [`ReconcileError`];
//!   `context.rs`: [`Context`]; `ryow.rs`: read-your-own-writes; `predicate.rs`: predicates.

pub(crate) mod builder;
pub(crate) mod context;
pub(crate) mod debounce;
pub(crate) mod dynamic;
pub(crate) mod events;
pub(crate) mod handle;
pub(crate) mod handlers;
pub(crate) mod intake;
pub(crate) mod metadata;
pub mod predicate;
pub(crate) mod queue;
pub(crate) mod reconciler;
pub(crate) mod registered;
pub(crate) mod ryow;
pub(crate) mod source;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod worker;

pub use builder::{Controller, ControllerBuilder, DEFAULT_MAX_CONCURRENT_RECONCILES};
pub use context::Context;
pub use handle::ControllerHandle;
pub use reconciler::{Action, FnReconciler, ReconcileError, Reconciler, Request, reconciler_fn};
pub use ryow::DEFAULT_READ_YOUR_WRITES_TIMEOUT;
pub use source::{SourceError, SourceItem};
pub use stats::ControllerStats;
