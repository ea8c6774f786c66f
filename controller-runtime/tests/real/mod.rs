//! Running a soak against a real kube-apiserver instead of apiserver-sim: the cluster named by
//! `KUBE_RT_TEST_KUBECONFIG` (the project's one name for "test against this cluster", see
//! `docs/conformance.md`), a namespace of the run's own, and what a bare API server lacks.
//!
//! - [`Cluster`]: the admin client, the run's namespace (created at the start; at the end its
//!   objects are deleted, then the namespace, then its finalizers are emptied through the
//!   `/finalize` subresource, since a server without a controller-manager never finalizes it);
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

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

/// The environment variable naming the cluster's kubeconfig.
pub const KUBECONFIG_ENV: &str = "KUBE_RT_TEST_KUBECONFIG";

/// How long the cleanup may take.
const CLEANUP_LIMIT: Duration = Duration::from_secs(60);

/// The kubeconfig `KUBE_RT_TEST_KUBECONFIG` names, if any.
pub fn kubeconfig_from_env() -> Option<PathBuf> {
    std::env::var_os(KUBECONFIG_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Microseconds since the Unix epoch, as text (for annotations).
pub fn now_us_text() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
        .to_string()
}

/// A client of the cluster the kubeconfig at `path` names (its current context).
pub async fn client(path: &Path) -> Result<kube::Client, String> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    kube::Client::try_from(config).map_err(|e| e.to_string())
}

/// The cluster under test and the run's namespace on it.
pub struct Cluster {
    /// The admin client of `KUBE_RT_TEST_KUBECONFIG`.
    pub client: kube::Client,
    /// The admin kubeconfig's path.
    pub kubeconfig: PathBuf,
    /// The run's own namespace.
    pub namespace: String,
}

impl Cluster {
    /// Connects with the admin kubeconfig at `kubeconfig` and creates the namespace
    /// `kube-rt-<soak>-<random suffix>`.
    pub async fn connect(kubeconfig: &Path, soak: &str) -> Result<Self, String> {
        let client = client(kubeconfig).await?;
        let suffix: String = (0..6)
            .map(|_| fastrand::alphanumeric().to_ascii_lowercase())
            .collect();
        let namespace = format!("kube-rt-{soak}-{suffix}");
        let mut ns = Namespace::default();
        ns.metadata.name = Some(namespace.clone());
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|e| format!("creating namespace {namespace}: {e}"))?;
        Ok(Self {
            client,
            kubeconfig: kubeconfig.to_owned(),
            namespace,
        })
    }

    /// `K` in the run's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
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
            .map_err(|e| format!("listing in {}: {e}", self.namespace))
    }

    /// Waits (polling, up to `limit`) for the server to answer `/readyz` with `ok`.
    pub async fn wait_ready(&self, limit: Duration) -> Result<Duration, String> {
        let started = Instant::now();
        loop {
            let request = http::Request::get("/readyz").body(Vec::new());
            let answer = match request {
                Ok(request) => self.client.request_text(request).await.ok(),
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

    /// Deletes what the run created in its namespace, then the namespace, and empties its
    /// finalizers so that it is gone (no controller-manager finalizes it); waits until it is.
    pub async fn cleanup(&self) -> Result<(), String> {
        let deadline = Instant::now() + CLEANUP_LIMIT;
        self.delete_all::<ConfigMap>(deadline).await?;
        self.delete_all::<Secret>(deadline).await?;
        self.delete_all::<Lease>(deadline).await?;
        self.delete_all::<RoleBinding>(deadline).await?;
        self.delete_all::<Role>(deadline).await?;
        self.delete_all::<ServiceAccount>(deadline).await?;
        let namespaces = Api::<Namespace>::all(self.client.clone());
        let name = &self.namespace;
        namespaces
            .delete(name, &DeleteParams::default())
            .await
            .map_err(|e| format!("deleting namespace {name}: {e}"))?;
        loop {
            match namespaces.get_opt(name).await {
                Ok(None) => return Ok(()),
                Ok(Some(mut ns)) => {
                    if let Some(spec) = ns.spec.as_mut() {
                        spec.finalizers = Some(Vec::new());
                    }
                    namespaces
                        .replace_subresource("finalize", name, &PostParams::default(), &ns)
                        .await
                        .map_err(|e| format!("finalizing namespace {name}: {e}"))?;
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!("reading namespace {name}: {e}"));
                }
                Err(_) => {}
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "namespace {name} still exists after {CLEANUP_LIMIT:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Deletes every `K` in the namespace and waits until none is left.
    async fn delete_all<K>(&self, deadline: Instant) -> Result<(), String>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
        <K as kube::Resource>::DynamicType: Default,
    {
        let api = self.api::<K>();
        let kind = K::kind(&Default::default()).into_owned();
        loop {
            let left = self.list::<K>().await?;
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{} {kind} left in {} after {CLEANUP_LIMIT:?}",
                    left.len(),
                    self.namespace
                ));
            }
            api.delete_collection(&DeleteParams::default(), &ListParams::default())
                .await
                .map_err(|e| format!("deleting every {kind} in {}: {e}", self.namespace))?;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
