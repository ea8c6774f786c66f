//! The error type shared by every operation of this crate.

use std::error::Error as StdError;

/// Everything that can go wrong when keying, storing or querying objects.
///
/// None of these errors is transient: retrying the same call with the same input gives the same
/// error. Callers fix the input (an object without a name, a malformed key) or the configuration
/// (an index that was never registered, or registered twice).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object has no `metadata.name`, so it cannot be stored under a key.
    #[error(
        "object has no metadata.name, so it has no store key; objects from the API server always have one"
    )]
    MissingName,

    /// A key string or key part is malformed (empty part, too many `/`, or a `/` inside a part).
    #[error("invalid object key {key:?}: {reason}; expected \"namespace/name\" or \"name\"")]
    InvalidKey {
        /// The rejected key, as given.
        key: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// A query named an index that was never registered.
    #[error(
        "index {0:?} does not exist; register it with `Indexers::with` or `Indexer::add_indexers`"
    )]
    UnknownIndex(String),

    /// `add_indexers` was given an index name that is already registered.
    #[error("index {0:?} already exists; index names must be unique")]
    IndexExists(String),

    /// A store refused an object for a reason of its own (for example, a transform that failed).
    #[error("store rejected object {key}: {source}")]
    Rejected {
        /// The key of the rejected object.
        key: String,
        /// What the store reported.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}
