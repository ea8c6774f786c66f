//! A build without the `playground` feature has no embedded server: starting one says so, and
//! no value of [`Embedded`] can exist.

use std::convert::Infallible;
use std::path::Path;

use kube::Client;

use super::error::ClusterError;

/// The embedded server this build does not have (the `playground` feature is off).
#[derive(Debug)]
pub struct Embedded {
    never: Infallible,
}

impl Embedded {
    /// Fails: configure a cluster, or build with the `playground` feature.
    pub async fn start() -> Result<Self, ClusterError> {
        Err(ClusterError::NoEmbeddedServer)
    }

    /// A client for the server (unreachable: there is none).
    pub fn client(&self) -> Result<Client, ClusterError> {
        match self.never {}
    }

    /// Where the kubeconfig was written (unreachable: there is none).
    pub fn kubeconfig(&self) -> &Path {
        match self.never {}
    }

    /// Stops the server (unreachable: there is none).
    pub async fn shutdown(self) {
        match self.never {}
    }
}
