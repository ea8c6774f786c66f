//! The crate's error type.

use crate::machinery::status::ApiError;

/// Errors of the simulator's library API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Binding or serving the socket failed; pick another port or check permissions.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing the kubeconfig failed.
    #[error("cannot write kubeconfig to {path}: {source}")]
    WriteKubeconfig {
        /// The destination.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Building a `kube::Client` failed.
    #[error("cannot build a kube client: {0}")]
    Client(String),
    /// An object could not be (de)serialized as JSON.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// The resource type is not served (unknown group/version/resource, or CRD not established).
    #[error("resource {0} is not served")]
    UnknownResource(String),
    /// A fault rule was refused (e.g. a probability outside `[0, 1]`).
    #[error("invalid fault rule: {0}")]
    InvalidFault(String),
    /// The server refused a seed write, with the Status it would have sent.
    #[error("the server refused the write: {0}")]
    Api(#[from] ApiError),
}

/// Result alias of the library API.
pub type Result<T, E = Error> = std::result::Result<T, E>;
