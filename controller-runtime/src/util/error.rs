//! The error of the reconciler helpers.

/// What the helpers of [`util`](crate::util) report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An object lacks a field the operation needs.
    #[error(
        "{kind} object is missing `{field}`; only objects read from the API server carry it, so read the object (from the cache or the client) before passing it"
    )]
    MissingField {
        /// The object's kind.
        kind: String,
        /// The missing field.
        field: &'static str,
    },

    /// The object already has a different controller.
    #[error(
        "object `{object}` is already controlled by {kind} `{name}`; an object can have only one controller owner reference, so pick another name or leave it to its controller"
    )]
    AlreadyOwned {
        /// The object that was to be owned.
        object: String,
        /// The current controller's kind.
        kind: String,
        /// The current controller's name.
        name: String,
    },

    /// The owner reference would cross a namespace boundary.
    #[error(
        "cannot make `{owner}` own `{object}`: {reason}; owners must be cluster-scoped or in the owned object's namespace"
    )]
    CrossNamespaceOwner {
        /// The owner.
        owner: String,
        /// The owned object.
        object: String,
        /// Why the reference is invalid.
        reason: String,
    },

    /// A request to the API server failed (a conflict is worth a retry of the reconcile).
    #[error("API request failed: {0}")]
    Api(#[from] kube::Error),

    /// An object could not be converted to or from JSON.
    #[error("cannot serialize the object: {0}")]
    Serialization(#[from] serde_json::Error),
}
