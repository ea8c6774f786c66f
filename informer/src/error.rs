//! The error type of this crate.

use std::time::Duration;

/// Everything the informer layer reports to its caller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that must be fixed before the informer runs was changed after `run` started.
    #[error("the informer is already running; call `{0}` before `run`")]
    AlreadyStarted(&'static str),

    /// The informer has stopped; a stopped informer never restarts.
    #[error("the informer has stopped and cannot take new handlers; build a new informer")]
    Stopped,

    /// A [`Registration`](crate::Registration) was handed to an informer that did not issue it.
    #[error(
        "this registration belongs to another informer; remove it from the informer that returned it"
    )]
    ForeignRegistration,

    /// Some informers of a factory had not synced when the wait timed out.
    #[error(
        "informers not synced after {timeout:?}: {}; check that the API server is reachable and the client may list and watch these resources",
        unsynced.join(", ")
    )]
    NotSynced {
        /// How long the wait lasted.
        timeout: Duration,
        /// The informers that had not synced, named by resource and scope.
        unsynced: Vec<String>,
    },

    /// The cache refused an operation (for example, adding an index whose name is taken).
    #[error(transparent)]
    Indexer(#[from] indexer::Error),
}
