//! The embedded server of the `playground` feature: an `apiserver-sim` in this process.

use std::path::{Path, PathBuf};
use std::time::Duration;

use apiserver_sim::ApiServer;
use kube::Client;
use tempfile::TempDir;

use super::error::ClusterError;

/// Delay of the embedded server's workload simulator: a pod is running and ready this long
/// after it is scheduled (and a batch pod finishes this long after it started).
pub const WORKLOAD_DELAY: Duration = Duration::from_secs(1);

fn embedded_error(error: apiserver_sim::Error) -> ClusterError {
    ClusterError::Embedded(Box::new(error))
}

/// An `apiserver-sim` running in this process, with a kubeconfig for it on disk (removed on
/// drop) so that `kubectl` can join in.
#[derive(Debug)]
pub struct Embedded {
    server: ApiServer,
    kubeconfig: PathBuf,
    _dir: TempDir,
}

impl Embedded {
    /// Starts the server on a free loopback port, with the workload simulator on (Deployments,
    /// ReplicaSets, Jobs and Services run by simulated controllers, pods by a simulated node,
    /// each pod ready [`WORKLOAD_DELAY`] after it is scheduled), and writes its kubeconfig.
    pub async fn start() -> Result<Self, ClusterError> {
        let server = ApiServer::builder()
            .workload_simulator(WORKLOAD_DELAY)
            .start()
            .await
            .map_err(embedded_error)?;
        let dir = tempfile::Builder::new().prefix("kube-rt-").tempdir()?;
        let kubeconfig = dir.path().join("kubeconfig");
        server
            .write_kubeconfig(&kubeconfig)
            .map_err(embedded_error)?;
        Ok(Self {
            server,
            kubeconfig,
            _dir: dir,
        })
    }

    /// The server.
    pub fn server(&self) -> &ApiServer {
        &self.server
    }

    /// A client for the server (default namespace `default`).
    pub fn client(&self) -> Result<Client, ClusterError> {
        self.server.client().map_err(embedded_error)
    }

    /// Where the kubeconfig was written.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Stops the server.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}
