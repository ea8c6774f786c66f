//! The error of building and running a controller.

use std::time::Duration;

/// What [`ControllerBuilder::build`](crate::controller::ControllerBuilder::build) and a running
/// controller report. A reconcile's own error is never one of these: it is logged, counted and
/// retried through the rate-limited queue (see
/// [`ReconcileError`](crate::controller::ReconcileError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A controller setting is out of range.
    #[error("invalid setting for controller `{controller}`: {reason}")]
    InvalidSetting {
        /// The controller's name.
        controller: String,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// A controller's own event handlers did not sync in time.
    #[error(
        "controller `{controller}`: event handlers for {unsynced} did not sync within {timeout:?}; check that the API server serves these kinds (installed CRDs) and that the client may list and watch them"
    )]
    HandlersNotSynced {
        /// The controller's name.
        controller: String,
        /// The watches whose handlers had not synced.
        unsynced: String,
        /// How long the controller waited.
        timeout: Duration,
    },

    /// A watched kind's cache could not be made or refused the controller's handler.
    #[error(transparent)]
    Cache(#[from] crate::cache::Error),

    /// Another controller of the manager has this name.
    #[error(
        "a controller named `{0}` is already registered with this manager; give each controller a unique name with `ControllerBuilder::named`"
    )]
    DuplicateName(String),

    /// The manager's `start` has returned: it runs no more controllers.
    #[error("the manager has stopped; build a new manager to run more controllers")]
    ManagerStopped,

    /// A permission the controller declares was refused.
    #[error(transparent)]
    Rbac(#[from] crate::rbac::Error),

    /// A controller of a sharded manager was built after the manager started: the ring's
    /// sharder learns its kinds at start.
    #[error(
        "controller `{controller}` was built after its sharded manager started; build every controller of a sharded manager before `start`"
    )]
    LateShardedController {
        /// The controller's name.
        controller: String,
    },
}

impl From<informer::Error> for Error {
    fn from(error: informer::Error) -> Self {
        Self::Cache(crate::cache::Error::Informer(error))
    }
}
