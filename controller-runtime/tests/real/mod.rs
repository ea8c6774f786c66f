//! Running a soak against a real kube-apiserver instead of apiserver-sim: the cluster named by
//! `KUBE_RT_TEST_KUBECONFIG` (testenv's [`KUBECONFIG_VAR`], the project's one name for "test
//! against this cluster", see `docs/conformance.md`), a namespace of the run's own, and what a
//! bare API server lacks.
//!
//! - [`Cluster`]: testenv's [`ExistingCluster`] (the admin client, the run's namespace created
//!   at the start and, at the end, emptied, deleted and finalized until it is gone), the
//!   garbage collector running beside it, and the soaks' typed reads;
//! - [`gc`]: the garbage collector's part for the soak workload's owned Secrets (a bare API
//!   server has none);
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

/// The cluster under test, the run's namespace on it, and the garbage collector for it.
pub struct Cluster {
    /// Boxed: a client configuration is large, and a soak's target holds either this or a
    /// simulator.
    env: Box<ExistingCluster>,
    gc: gc::Collector,
}

impl Cluster {
    /// Connects with the admin kubeconfig at `kubeconfig`, creates the namespace
    /// `kube-rt-<soak>-<random suffix>` and starts the garbage collector there.
    pub async fn connect(kubeconfig: &Path, soak: &str) -> Result<Self, String> {
        let env = ExistingCluster::connect_prefixed(kubeconfig, &format!("kube-rt-{soak}"))
            .await
            .map_err(|e| e.to_string())?;
        let gc = gc::Collector::start(env.client(), env.namespace().to_owned());
        Ok(Self {
            env: Box::new(env),
            gc,
        })
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

    /// Stops the garbage collector, then removes the run's namespace with everything in it
    /// (testenv's cleanup, which returns once the namespace is gone). How many Secrets the
    /// collector deleted.
    pub async fn finish(self) -> Result<u64, String> {
        let collected = self.gc.stop().await;
        self.env.cleanup().await.map_err(|e| e.to_string())?;
        Ok(collected)
    }
}
