//! Running a soak against a real kube-apiserver instead of apiserver-sim: the cluster named by
//! `KUBE_RT_TEST_KUBECONFIG` (testenv's [`KUBECONFIG_VAR`], the project's one name for "test
//! against this cluster", see `docs/conformance.md`), a namespace of the run's own, and what a
//! bare API server lacks.
//!
//! - [`Cluster`]: testenv's [`ExistingCluster`] (the admin client, the run's namespace created
//!   at the start and, at the end, emptied, deleted and finalized until it is gone), who
//!   collects the workload's garbage there, and the soaks' typed reads;
//! - [`gc`]: the garbage collector's part for the soak workload's owned Secrets, played by the
//!   soak only on a cluster without one (a bare API server);
//! - [`access`]: a ServiceAccount for member processes, its RBAC, a token, and withdrawing the
//!   Lease rights (real 403s on every Lease request) and granting them back;
//! - [`restart`]: restarting the API server by the user's command, compacting etcd, and
//!   proving that a watch from before the compaction gets a real 410.

#![allow(dead_code)]

pub mod access;
pub mod gc;
pub mod restart;

use std::path::Path;
use std::time::Duration;

use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;
use testenv::ExistingCluster;
pub use testenv::KUBECONFIG_VAR;
pub use testenv::cluster::named_kubeconfig;
use tokio::time::Instant;

/// The cluster under test, the run's namespace on it, and who collects the workload's garbage.
pub struct Cluster {
    /// Boxed: a client configuration is large, and a soak's target holds either this or a
    /// simulator.
    env: Box<ExistingCluster>,
    /// The soak's own collector, on a cluster without a garbage collector; `None` where the
    /// cluster's collects.
    gc: Option<gc::Collector>,
}

impl Cluster {
    /// Connects with the admin kubeconfig at `kubeconfig` and creates the namespace
    /// `kube-rt-<soak>-<random suffix>`. Asks the cluster whether it collects garbage (see
    /// [`ExistingCluster::collects_garbage`]); if it does not (a bare API server), says so and
    /// starts the soak's own collector there.
    pub async fn connect(kubeconfig: &Path, soak: &str) -> Result<Self, String> {
        let env = ExistingCluster::connect_prefixed(kubeconfig, &format!("kube-rt-{soak}"))
            .await
            .map_err(|e| e.to_string())?;
        let gc = match env.collects_garbage().await {
            Ok(true) => None,
            Ok(false) => {
                println!(
                    "notice: the cluster has no garbage collector (no kube-controller-manager): \
                     the soak deletes the Secrets whose ConfigMap is gone itself"
                );
                Some(gc::Collector::start(
                    env.client(),
                    env.namespace().to_owned(),
                ))
            }
            Err(e) => {
                let _ = env.cleanup().await;
                return Err(format!("asking the cluster for a garbage collector: {e}"));
            }
        };
        Ok(Self {
            env: Box::new(env),
            gc,
        })
    }

    /// Whether the cluster's own garbage collector collects the workload's garbage (else the
    /// soak's, see [`gc`]).
    pub fn collects_garbage(&self) -> bool {
        self.gc.is_none()
    }

    /// The admin client (its default namespace the run's).
    pub fn client(&self) -> kube::Client {
        self.env.client()
    }

    /// The run's own namespace.
    pub fn namespace(&self) -> &str {
        self.env.namespace()
    }

    /// The admin kubeconfig's path.
    pub fn kubeconfig(&self) -> &Path {
        self.env.kubeconfig()
    }

    /// `K` in the run's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client(), self.namespace())
    }

    /// Every `K` in the run's namespace.
    pub async fn list<K>(&self) -> Result<Vec<K>, String>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
        <K as kube::Resource>::DynamicType: Default,
    {
        self.api::<K>()
            .list(&ListParams::default())
            .await
            .map(|list| list.items)
            .map_err(|e| format!("listing in {}: {e}", self.namespace()))
    }

    /// Waits (polling, up to `limit`) for the server to answer `/readyz` with `ok`.
    pub async fn wait_ready(&self, limit: Duration) -> Result<Duration, String> {
        let started = Instant::now();
        let client = self.client();
        loop {
            let request = http::Request::get("/readyz").body(Vec::new());
            let answer = match request {
                Ok(request) => client.request_text(request).await.ok(),
                Err(e) => return Err(format!("readyz request: {e}")),
            };
            if answer.as_deref() == Some("ok") {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= limit {
                return Err(format!("the API server was not ready within {limit:?}"));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Stops the soak's collector if it ran, then removes the run's namespace with everything
    /// in it (testenv's cleanup, which returns once the namespace is gone). Who collected the
    /// garbage, for the summary.
    pub async fn finish(self) -> Result<String, String> {
        let collected = match self.gc {
            Some(gc) => format!(
                "{} orphaned Secrets garbage-collected by the soak (the cluster has no garbage \
                 collector)",
                gc.stop().await
            ),
            None => "orphaned Secrets garbage-collected by the cluster".to_owned(),
        };
        self.env.cleanup().await.map_err(|e| e.to_string())?;
        Ok(format!("{collected}; namespace removed"))
    }
}
