//! The crate's error type.

use std::path::PathBuf;
use std::time::Duration;

/// Why the environment could not be set up, or a wait ran out.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server could not be started, or it refused a CRD (the message is the Status a
    /// real server would send: an invalid schema, a name already taken, …).
    #[error("apiserver-sim: {0}")]
    Server(#[from] apiserver_sim::Error),
    /// The existing cluster named by [`KUBECONFIG_VAR`](crate::KUBECONFIG_VAR) could not be
    /// reached or used (its kubeconfig unreadable, the scratch namespace refused, its cleanup
    /// failed).
    #[error("the existing cluster of {kubeconfig}: {message}")]
    Cluster {
        /// The kubeconfig file.
        kubeconfig: PathBuf,
        /// What failed.
        message: String,
    },
    /// testenv's own control plane could not be started or used: a binary missing from its
    /// directory, a server that exited (the message quotes the end of its log) or was not ready
    /// in time.
    #[error("the control plane from {assets}: {message}")]
    ControlPlane {
        /// The directory of binaries.
        assets: PathBuf,
        /// What failed.
        message: String,
    },
    /// The environment variables name two servers at once
    /// ([`KUBECONFIG_VAR`](crate::KUBECONFIG_VAR) and [`ASSETS_VAR`](crate::ASSETS_VAR)).
    #[error("{0}")]
    Lane(String),
    /// The test asked for the simulator (its configuration, fault injection, its own view of the
    /// objects …) while it runs on a real API server (an existing cluster or testenv's own
    /// control plane): [`TestEnvBuilder::start_or_skip`](crate::TestEnvBuilder::start_or_skip)
    /// turns this into a skip.
    #[error("the test needs the simulator ({what}), but it runs on a real API server")]
    SimulatorRequired {
        /// What the test needs of the simulator.
        what: String,
    },
    /// A CRD could not be installed: the server refused it (the message is its Status: an
    /// invalid schema, a name already taken, …), or it has no served storage version.
    #[error("installing CRD {name}: {source}")]
    Crd {
        /// The CRD's name (`<plural>.<group>`).
        name: String,
        /// What the server said: an `apiserver_sim::Error` from the simulator, a `kube::Error`
        /// from an existing cluster.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A CRD file or directory could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A document of a CRD file is not a CustomResourceDefinition.
    #[error("{path}: document {document} is not a CustomResourceDefinition: {message}")]
    NotACrd {
        /// The file.
        path: PathBuf,
        /// The document's position in the file, from 1.
        document: usize,
        /// What did not parse.
        message: String,
    },
    /// A manager refused its configuration, failed to start, or stopped with an error.
    #[error("manager: {0}")]
    Manager(#[from] controller_runtime::manager::Error),
    /// A manager's task panicked.
    #[error("the manager's task panicked: {0}")]
    ManagerPanicked(String),
    /// A manager stopped before the condition it was waited on for held.
    #[error("the manager stopped while waiting for {what}")]
    ManagerStopped {
        /// What was being waited for.
        what: String,
    },
    /// A condition did not hold within the deadline.
    #[error("timed out after {timeout:?} waiting for {what}{}", last.as_ref().map(|l| format!(" (last: {l})")).unwrap_or_default())]
    Timeout {
        /// What was being waited for.
        what: String,
        /// How long it was waited for.
        timeout: Duration,
        /// The last error the condition reported, if it reported one.
        last: Option<String>,
    },
    /// The webhook certificates could not be made or written.
    #[cfg(feature = "webhook")]
    #[error("webhook certificates: {0}")]
    Certificates(String),
    /// The webhook configurations could not be written.
    #[cfg(feature = "webhook")]
    #[error("installing webhook configuration {name}: {source}")]
    WebhookConfiguration {
        /// The configuration's name.
        name: String,
        /// The API error.
        #[source]
        source: controller_runtime::util::Error,
    },
    /// The environment was built without webhooks ([`TestEnvBuilder::webhooks`](crate::TestEnvBuilder::webhooks)).
    #[cfg(feature = "webhook")]
    #[error("the test environment was built without webhooks; call TestEnvBuilder::webhooks()")]
    WebhooksNotEnabled,
}
