//! Why a connection, the embedded server or a CRD installation failed.

use std::path::PathBuf;
use std::time::Duration;

/// How long `install_crd` waits for a CRD to be established.
pub const CRD_ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a connection or the embedded server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The kubeconfig given with `--kubeconfig` could not be read or used.
    #[error("kubeconfig {path}: {message}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// KUBECONFIG or the in-cluster environment is set but unusable.
    #[error("cluster configuration: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    /// A client could not be built from the configuration.
    #[error("client: {0}")]
    Client(#[from] kube::Error),
    /// The embedded server failed.
    #[error("embedded apiserver-sim: {0}")]
    Embedded(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// No cluster is configured, and this build has no embedded server to fall back on.
    #[error(
        "no cluster configured (KUBECONFIG, ~/.kube/config, in-cluster or --kubeconfig), and this \
         build has no embedded apiserver-sim (the `playground` feature is off)"
    )]
    NoEmbeddedServer,
    /// A temporary directory for the kubeconfig could not be made.
    #[error("temporary directory: {0}")]
    TempDir(#[from] std::io::Error),
    /// A CRD was not established in time.
    #[error("CRD {0} not established within {CRD_ESTABLISHED_TIMEOUT:?}")]
    CrdNotEstablished(String),
}
