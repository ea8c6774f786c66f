//! The error of the sharding module: settings that cannot work and failed Lease requests.

/// Why a sharding setting is refused or a shard Lease request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The ring's name cannot be the name part of a label key and a label value.
    #[error(
        "the ring name {ring:?} {reason}; it names the ring in label keys and values, so it needs 1 to 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
    )]
    InvalidRingName {
        /// The name given.
        ring: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// The shard's name cannot be both a Lease name and a label value.
    #[error(
        "the shard name {shard:?} {reason}; it is the shard Lease's name and a label value, so it needs 1 to 63 lower-case letters, digits, '-' or '.', beginning and ending with a letter or digit"
    )]
    InvalidShardName {
        /// The name given.
        shard: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// No namespace for the shard Leases.
    #[error("the shard Leases' namespace must not be empty")]
    MissingNamespace,

    /// The sharder's resync period is zero.
    #[error("the sharder's resync period must be above zero")]
    ZeroResync,

    /// A manager was given both sharding and leader election: a sharded manager's replicas all
    /// work at once, each on its own objects, and elect no leader.
    #[error(
        "a manager cannot both shard and elect a leader; remove `leader_election(...)` (each shard holds its own Lease, and the ring's sharder elects itself)"
    )]
    WithLeaderElection,

    /// The Lease timings break the rules of leader election, which renews shard Leases.
    #[error("invalid shard Lease timings: {0}")]
    LeaseTimings(#[source] crate::leader_election::Error),

    /// A request about a shard Lease failed.
    #[error("cannot {action} the shard Lease {namespace}/{shard}: {source}")]
    Lease {
        /// What was attempted (`read`, `acquire`...).
        action: &'static str,
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's (the shard's) name.
        shard: String,
        /// The API error (boxed: it is large, and this error travels in every `Result`).
        #[source]
        source: Box<kube::Error>,
    },

    /// The sharder's caches of shard Leases and sharded objects could not be set up or filled.
    #[error("the sharder's caches: {0}")]
    Cache(#[source] informer::Error),

    /// A shard's drain acknowledgement (removing its labels from an object) failed.
    #[error("cannot acknowledge the drain of {kind} {namespace}/{name}: {source}")]
    Acknowledge {
        /// The object's kind.
        kind: String,
        /// Its namespace (empty for a cluster-scoped object).
        namespace: String,
        /// Its name.
        name: String,
        /// The API error.
        #[source]
        source: Box<kube::Error>,
    },
}
