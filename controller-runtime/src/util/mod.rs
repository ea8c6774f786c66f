//! Helpers a reconciler calls, whatever controller runs it (controller-runtime's
//! `controllerutil`): owner references ([`set_controller_reference`], [`is_controlled_by`],
//! [`get_controller_of`]), writing desired state ([`create_or_update`], [`server_side_apply`]),
//! running cleanup before an object goes away ([`finalizer`]), status conditions
//! ([`set_status_condition`] and its companions, apimachinery's `meta.SetStatusCondition`), and
//! the `User-Agent` a client sends ([`with_user_agent`]). This module depends on nothing of the
//! crate but its kinds, so the helpers work whatever runs the reconcile.
//!
//! # Finalizers
//!
//! [`finalizer`] adds a finalizer on the first reconcile and goes on with the updated object in
//! that same reconcile (adding it changes metadata only, an update that predicates such as
//! [`GenerationChanged`](crate::controller::predicate::GenerationChanged) drop, so the helper
//! never waits for its event), hands the object to your cleanup once it is being deleted, and
//! removes the finalizer only after the cleanup succeeded:
//!
//! ```
//! use std::sync::Arc;
//! use controller_runtime::controller::{Action, Context, ReconcileError, Request};
//! use controller_runtime::util::{FinalizerEvent, finalizer};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! async fn reconcile(_req: Request, ctx: Context<ConfigMap>) -> Result<Action, ReconcileError> {
//!     let Some(config) = ctx.get() else { return Ok(Action::done()) };
//!     finalizer(&ctx.api(), "example.com/cleanup", config, |event| async move {
//!         match event {
//!             // Live: reconcile as usual; the result is the reconcile's.
//!             FinalizerEvent::Apply(config) => apply(&config).await,
//!             // Being deleted: clean up outside the cluster. `Ok` removes the finalizer (the
//!             // returned action is ignored: the object is about to go away); an error keeps
//!             // it and the cleanup is retried with backoff.
//!             FinalizerEvent::Cleanup(config) => forget(&config).await,
//!         }
//!     })
//!     .await
//! }
//! # async fn apply(_: &Arc<ConfigMap>) -> Result<Action, ReconcileError> { Ok(Action::done()) }
//! # async fn forget(_: &Arc<ConfigMap>) -> Result<Action, ReconcileError> { Ok(Action::done()) }
//! ```
//!
//! # Errors
//!
//! [`Error`]: an object that lacks a name or uid (it must have been read from the API server),
//! an owner reference that would cross namespaces or replace another controller, and the API
//! server's answers.

mod apply;
mod conditions;
mod error;
mod finalizer;
mod owner;
mod user_agent;

pub use crate::kind::get_controller_of;
pub use apply::{OperationResult, create_or_update, server_side_apply};
pub use conditions::{
    CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN, find_status_condition,
    find_status_condition_mut, is_status_condition_false, is_status_condition_present_and_equal,
    is_status_condition_true, remove_status_condition, set_status_condition,
};
pub use error::Error;
pub use finalizer::{FinalizerEvent, finalizer};
pub use owner::{is_controlled_by, set_controller_reference};
pub use user_agent::{user_agent, with_user_agent};
