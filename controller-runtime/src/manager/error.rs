//! The error of the manager: configuring, starting and running it.

use std::time::Duration;

/// What the manager reports: a configuration or start-up problem (none is retried), or the end
/// of its run. An operator's `main` should exit with it and let its Deployment restart the
/// process, as controller-runtime does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two controllers of one manager share a name.
    #[error(
        "a controller named `{0}` is already registered with this manager; give each controller a unique name with `ControllerBuilder::named`"
    )]
    DuplicateName(String),

    /// No controller of that name runs in this manager.
    #[error("no controller named `{0}` is registered with this manager")]
    UnknownController(String),

    /// No client could be inferred from the environment ([`Manager::try_default`](crate::manager::Manager::try_default)).
    #[error(
        "cannot build a client from the environment: {0}; point KUBECONFIG at a kubeconfig file, or run inside a cluster"
    )]
    Client(#[source] kube::Error),

    /// The manager was started twice.
    #[error("the manager has already been started; `start` runs once per manager")]
    AlreadyStarted,

    /// A controller or runnable was added after the manager's `start` returned.
    #[error("the manager has stopped; build a new manager to run more controllers")]
    Stopped,

    /// Informer caches did not sync in time (the message names them).
    #[error(
        "caches did not sync: {0}; check that the API server serves these kinds and that the client may list and watch them"
    )]
    CacheSync(#[source] informer::Error),

    /// The cache settings are invalid (reported by `start`), or a cache refused a request.
    #[error(transparent)]
    Cache(#[from] crate::cache::Error),

    /// A runnable added to the manager failed.
    #[error("runnable `{name}` failed: {message}")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// Its error, as text.
        message: String,
    },

    /// An RBAC rule was refused, or the roles could not be written.
    #[error(transparent)]
    Rbac(#[from] crate::rbac::Error),

    /// Listening for SIGINT/SIGTERM failed.
    #[error("cannot listen for shutdown signals: {0}; disable them with `handle_signals(false)`")]
    Signal(#[source] std::io::Error),

    /// In-flight work did not finish within the graceful shutdown timeout.
    #[error("graceful shutdown timed out after {0:?}; some reconciles were cancelled")]
    ShutdownTimeout(Duration),

    /// A second shutdown request arrived before the graceful shutdown finished.
    #[error("shutdown forced by a second signal; in-flight reconciles were cancelled")]
    ForcedShutdown,

    /// This manager lost its leader lease (it failed to renew it before the renew deadline);
    /// its leader-only runnables were stopped at once. Like controller-runtime, which exits
    /// the process here, the caller should exit (or build a new manager to campaign again).
    #[error("leader election lost: the lease was not renewed before the renew deadline")]
    LeadershipLost,

    /// This shard lost its shard Lease (it failed to renew it before the renew deadline); its
    /// controllers were stopped at once, and the sharder moves its objects once the Lease has
    /// been silent for two durations. The caller should exit, as after
    /// [`LeadershipLost`](Self::LeadershipLost), and be restarted.
    #[error(
        "shard {shard} of ring {ring} lost its shard Lease: it was not renewed before the renew deadline"
    )]
    ShardLeaseLost {
        /// The ring.
        ring: String,
        /// This replica's shard.
        shard: String,
    },

    /// The sharding settings are invalid, or a controller cannot be sharded.
    #[error(transparent)]
    Sharding(#[from] crate::sharding::Error),

    /// The leader election settings are invalid.
    #[error("invalid leader election settings: {0}")]
    LeaderElection(#[from] crate::leader_election::Error),

    /// The metrics or health probe server could not bind its address.
    #[error(
        "cannot listen on {address} for {what}: {source}; pick a free port (0 lets the system choose)"
    )]
    Bind {
        /// What the listener was for.
        what: &'static str,
        /// The address.
        address: std::net::SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },

    /// A health or readiness check of that name already exists.
    #[error("{0}; give each check a unique name")]
    DuplicateCheck(String),

    /// A webhook could not be registered, or the webhook server could not start.
    #[cfg(feature = "webhook")]
    #[error(transparent)]
    Webhook(#[from] crate::webhook::Error),
}
