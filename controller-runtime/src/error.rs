//! [`Error`]: any error of this crate, for code that mixes several modules.

/// Any error of this crate, for code that mixes several modules — an operator's `main`, a setup
/// function that registers a field index, builds controllers and starts the manager. Every
/// module's error converts into it with `?`; match on the variant to reach the module's own
/// error (`Error::Manager(manager::Error::LeadershipLost)`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or configuring the cache.
    #[error(transparent)]
    Cache(#[from] crate::cache::Error),
    /// Building or running a controller.
    #[error(transparent)]
    Controller(#[from] crate::controller::Error),
    /// Configuring, starting or running the manager.
    #[error(transparent)]
    Manager(#[from] crate::manager::Error),
    /// A reconciler helper.
    #[error(transparent)]
    Util(#[from] crate::util::Error),
    /// An RBAC rule or role.
    #[error(transparent)]
    Rbac(#[from] crate::rbac::Error),
    /// Leader election settings.
    #[error(transparent)]
    LeaderElection(#[from] crate::leader_election::Error),
    /// Sharding settings or a shard's Lease.
    #[error(transparent)]
    Sharding(#[from] crate::sharding::Error),
    /// A queue setting (say, a priority out of range).
    #[error(transparent)]
    Queue(#[from] workqueue::Error),
    /// A webhook registration or the webhook server.
    #[cfg(feature = "webhook")]
    #[error(transparent)]
    Webhook(#[from] crate::webhook::Error),
}
