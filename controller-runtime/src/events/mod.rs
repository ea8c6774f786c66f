//! Kubernetes events (`events.k8s.io/v1`) about the objects a controller reconciles, published
//! without ever blocking a reconcile (client-go's `tools/events`).
//!
//! Every controller runs a [`Recorder`] (unless built with
//! [`event_recorder(false)`](crate::controller::ControllerBuilder::event_recorder)); a reconcile
//! publishes through its context's shorthands, which name the object being reconciled:
//!
//! ```no_run
//! # use controller_runtime::controller::Context;
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # fn demo(ctx: &Context<ConfigMap>) {
//! ctx.normal_event("Synced", "ConfigMap synced successfully");
//! ctx.warning_event("InvalidSpec", "data.size is not a number");
//! # }
//! ```
//!
//! or through [`Context::recorder`](crate::controller::Context::recorder) for any object
//! ([`Recorder::normal`], [`Recorder::warning`], [`Recorder::publish`] with an
//! [`EventRecord`] to set the action, related object and more). Publishing only puts the event
//! in a bounded queue; a [`RecorderTask`] (run by the manager) writes them to the API server.
//! When the queue is full the event is dropped and counted ([`Recorder::dropped`]). Repeats of
//! the same event within [`SERIES_WINDOW`] become one event whose `series.count` grows.
//!
//! A recorder needs `create` and `patch` on `events.k8s.io` events, which the manager's
//! generated RBAC policy includes for every controller that runs one.

mod recorder;

pub use recorder::{
    DEFAULT_EVENT_QUEUE, EventRecord, EventType, Recorder, RecorderTask, SERIES_WINDOW,
    reference_to,
};
