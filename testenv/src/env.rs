//! [`TestEnv`]: a running simulator (or a real API server) with the test's CRDs, its client,
//! and managers started and stopped with the test.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ApiServer;
use controller_runtime::manager::{Manager, ManagerBuilder};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::cluster::ExistingCluster;
use crate::control_plane::ControlPlane;
use crate::error::Error;
use crate::running::RunningManager;
use crate::wait::{Outcome, eventually};

/// Where an environment's API server is.
pub(crate) enum Backend {
    /// An in-process simulator of the environment's own.
    Simulator(ApiServer),
    /// A real API server: the existing cluster [`KUBECONFIG_VAR`](crate::KUBECONFIG_VAR) names,
    /// or testenv's own control plane.
    Cluster(Box<ExistingCluster>),
}

/// An API server with the test's CRDs installed and established, a client for it, and managers
/// that stop with the environment. The server is an in-process `apiserver-sim` on a free
/// loopback port; or a real API server — the existing cluster
/// [`KUBECONFIG_VAR`](crate::KUBECONFIG_VAR) names, or testenv's own control plane from the
/// binaries [`ASSETS_VAR`](crate::ASSETS_VAR) or the builder names — where the environment works
/// in a scratch namespace of its own
/// ([`namespace`](Self::namespace)) and deletes what it made when it ends.
///
/// Dropping the environment stops its managers and its server (or cleans up the cluster);
/// [`stop`](Self::stop) does the same and reports how the managers ended.
pub struct TestEnv {
    pub(crate) client: Client,
    pub(crate) timeout: Duration,
    pub(crate) shutdown: CancellationToken,
    /// Cancels `shutdown` when the environment is dropped.
    pub(crate) _stop_on_drop: DropGuard,
    #[cfg(feature = "webhook")]
    pub(crate) certs: Option<crate::webhook::ServingCerts>,
    /// After the guard, so managers are told to stop before the server goes or the cluster is
    /// cleaned.
    pub(crate) backend: Backend,
    /// The control plane the environment runs on, if it runs on testenv's own: kept running
    /// until the cluster is cleaned up.
    pub(crate) control_plane: Option<Arc<ControlPlane>>,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("namespace", &self.namespace())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// The simulator, to seed objects, read its own view, or inject faults; `None` on an
    /// existing cluster.
    pub fn simulator(&self) -> Option<&ApiServer> {
        match &self.backend {
            Backend::Simulator(server) => Some(server),
            Backend::Cluster(_) => None,
        }
    }

    /// The simulator, or `None` after printing that the test is skipped on an existing cluster
    /// because it needs `what` of the simulator (its request counts, fault injection …):
    /// `let Some(server) = env.simulator_or_skip("request counts") else { return };`.
    pub fn simulator_or_skip(&self, what: &str) -> Option<&ApiServer> {
        let server = self.simulator();
        if server.is_none() {
            crate::skip::notice(what);
        }
        server
    }

    /// The name to give a further namespace the test makes (a test of several namespaces):
    /// `name` itself on the simulator; on an existing cluster `<scratch namespace>-<name>`,
    /// emptied and deleted with the environment.
    pub fn namespace_of_its_own(&self, name: &str) -> String {
        match &self.backend {
            Backend::Simulator(_) => name.to_owned(),
            Backend::Cluster(cluster) => cluster.namespace_of_its_own(name),
        }
    }

    /// testenv's own control plane, when the environment runs on one (its kubeconfig, its
    /// processes, whether its controller-manager runs).
    pub fn control_plane(&self) -> Option<&ControlPlane> {
        self.control_plane.as_deref()
    }

    /// The existing cluster, when the environment runs on a real API server (testenv's own
    /// control plane included: the environment's scratch namespace and its cleanup).
    pub fn existing_cluster(&self) -> Option<&ExistingCluster> {
        match &self.backend {
            Backend::Simulator(_) => None,
            Backend::Cluster(cluster) => Some(cluster),
        }
    }

    /// A client for the server; its default namespace is [`namespace`](Self::namespace).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The namespace the test works in: `default` on the simulator, the environment's scratch
    /// namespace on an existing cluster.
    pub fn namespace(&self) -> &str {
        match &self.backend {
            Backend::Simulator(_) => crate::SIMULATOR_NAMESPACE,
            Backend::Cluster(cluster) => cluster.namespace(),
        }
    }

    /// Whether deleting an owner makes the server delete its dependents (a test's
    /// garbage-collection step runs where this holds): always on the simulator, which collects
    /// garbage itself; on a real server when it runs a garbage collector, asked of it with
    /// [`ExistingCluster::collects_garbage`] (a whole cluster, or testenv's own control plane
    /// with its controller-manager; not a bare API server).
    pub async fn collects_garbage(&self) -> Result<bool, Error> {
        match &self.backend {
            Backend::Simulator(_) => Ok(true),
            Backend::Cluster(cluster) => cluster.collects_garbage().await,
        }
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
        match &self.backend {
            Backend::Simulator(server) => {
                server.install_crd(crd).await.map_err(|source| Error::Crd {
                    name: crd.metadata.name.clone().unwrap_or_default(),
                    source: Box::new(source),
                })
            }
            Backend::Cluster(cluster) => cluster.install_crd(crd, self.timeout).await,
        }
    }

    /// A manager builder for this environment's client that ignores SIGINT/SIGTERM and stops
    /// with the environment (with a webhook server presenting the environment's certificate when
    /// it was built with [`webhooks`](crate::TestEnvBuilder::webhooks)). On an existing cluster
    /// its caches are limited to the scratch namespace, so tests sharing the cluster do not see
    /// each other's objects. Configure it further, register controllers on what it builds, then
    /// [`start_manager`](Self::start_manager).
    pub fn manager_builder(&self) -> ManagerBuilder {
        let builder = Manager::builder(self.client())
            .handle_signals(false)
            .shutdown_token(self.shutdown.child_token());
        let builder = match &self.backend {
            Backend::Simulator(_) => builder,
            Backend::Cluster(cluster) => builder.namespace(cluster.namespace()),
        };
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
            #[cfg(feature = "webhook")]
            self.existing_cluster().map(ExistingCluster::scope),
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

    /// Stops every manager of the environment and the server; on an existing cluster, deletes
    /// what the environment made there instead (the cleanup's failure is returned).
    pub async fn stop(self) -> Result<(), Error> {
        self.shutdown.cancel();
        match self.backend {
            Backend::Simulator(server) => {
                server.shutdown().await;
                Ok(())
            }
            Backend::Cluster(cluster) => cluster.cleanup().await,
        }
    }
}
