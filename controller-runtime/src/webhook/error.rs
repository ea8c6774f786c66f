//! [`Error`]: why a webhook could not be registered or the webhook server could not start.

use std::net::SocketAddr;
use std::path::PathBuf;

/// A registration or start-up problem of the webhook server (reported through
/// [`manager::Error::Webhook`](crate::manager::Error::Webhook) by the manager). Problems of one
/// review are never errors of the server: they are answered in the review itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two webhooks were registered on one path.
    #[error(
        "a webhook is already registered on `{0}`; give one of them another path with `with_path`"
    )]
    DuplicatePath(String),

    /// A webhook path is not of the form controller-runtime accepts.
    #[error("invalid webhook path `{path}`: {reason}")]
    InvalidPath {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A conversion registration is inconsistent (a spoke of another kind, a version twice, a
    /// kind registered twice).
    #[error("invalid conversion: {0}")]
    InvalidConversion(String),

    /// The serving certificate or key could not be read or used.
    #[error("webhook serving certificate `{path}`: {reason}")]
    Certificate {
        /// The file that failed (the certificate or the key).
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The webhook server could not listen on its address.
    #[error("cannot listen on {address} for the webhook server: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },

    /// The server was started twice.
    #[error("the webhook server has already been started")]
    AlreadyStarted,

    /// The manager was built without a webhook server.
    #[error(
        "this manager has no webhook server; configure one with `ManagerBuilder::webhook_server`"
    )]
    NotConfigured,
}
