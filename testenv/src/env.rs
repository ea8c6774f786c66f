//! [`TestEnv`]: a running simulator with the test's CRDs, its client, and managers started and
//! stopped with the test.

use std::future::Future;
use std::time::Duration;

use apiserver_sim::ApiServer;
use controller_runtime::manager::{Manager, ManagerBuilder};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::error::Error;
use crate::running::RunningManager;
use crate::wait::{Outcome, eventually};

/// An API server (an in-process `apiserver-sim` on a free loopback port) with the test's CRDs
/// installed and established, a client for it, and managers that stop with the environment.
///
/// Dropping the environment stops its managers and its server; [`stop`](Self::stop) does the
/// same and reports how the managers ended.
pub struct TestEnv {
    pub(crate) server: ApiServer,
    pub(crate) client: Client,
    pub(crate) timeout: Duration,
    pub(crate) shutdown: CancellationToken,
    /// Cancels `shutdown` when the environment is dropped.
    pub(crate) _stop_on_drop: DropGuard,
    #[cfg(feature = "webhook")]
    pub(crate) certs: Option<crate::webhook::ServingCerts>,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("server", &self.server.url())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// The simulator, to seed objects, read its own view, or inject faults.
    pub fn server(&self) -> &ApiServer {
        &self.server
    }

    /// A client for the simulator (default namespace `default`).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// How long the environment's waits last.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Installs `crd` now and returns once its custom resources are served (for a test of a
    /// kind that appears while the operator runs).
    pub async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, Error> {
        self.server
            .install_crd(crd)
            .await
            .map_err(|source| Error::Crd {
                name: crd.metadata.name.clone().unwrap_or_default(),
                source,
            })
    }

    /// A manager builder for this environment's client that ignores SIGINT/SIGTERM and stops
    /// with the environment (with a webhook server presenting the environment's certificate when
    /// it was built with [`webhooks`](crate::TestEnvBuilder::webhooks)). Configure it further, register
    /// controllers on what it builds, then [`start_manager`](Self::start_manager).
    pub fn manager_builder(&self) -> ManagerBuilder {
        let builder = Manager::builder(self.client())
            .handle_signals(false)
            .shutdown_token(self.shutdown.child_token());
        #[cfg(feature = "webhook")]
        let builder = match &self.certs {
            Some(certs) => builder.webhook_server(crate::webhook::server_config(certs)),
            None => builder,
        };
        builder
    }

    /// A manager with the defaults of [`manager_builder`](Self::manager_builder).
    pub fn manager(&self) -> Manager {
        self.manager_builder().build()
    }

    /// Starts `manager` in the background; the returned handle waits for its caches, stops it
    /// and reports how it ended.
    pub fn start_manager(&self, manager: Manager) -> RunningManager {
        RunningManager::start(
            manager,
            self.timeout,
            self.client(),
            #[cfg(feature = "webhook")]
            self.certs.as_ref().map(|certs| certs.ca_pem().to_vec()),
        )
    }

    /// Polls `check` until it holds, for at most the environment's [`timeout`](Self::timeout):
    /// see [`eventually`](crate::eventually) for what `check` may return.
    pub async fn eventually<O, F, Fut>(&self, what: &str, check: F) -> Result<O::Value, Error>
    where
        O: Outcome,
        F: FnMut() -> Fut,
        Fut: Future<Output = O>,
    {
        eventually(what, self.timeout, check).await
    }

    /// Stops every manager of the environment and the server.
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.server.shutdown().await;
    }
}
