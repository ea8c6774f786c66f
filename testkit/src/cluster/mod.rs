//! [`TestCluster`]: the API server a test of this workspace runs against — a fresh simulator,
//! the existing cluster `KUBE_RT_TEST_KUBECONFIG` names, or testenv's own control plane from the
//! binaries `KUBE_RT_TEST_ASSETS` names (one per test process, started by its first test) —
//! with the simulator's seeding and inspection calls made through the API on a real server, so
//! one test source runs in every mode.
//!
//! On a real server the tests of a process share one namespace, [`ns`]`()`, and take turns: a
//! [`TestCluster`] holds the turn until it is dropped, and its start empties the namespace.
//! Tests that need the simulator (virtual time, its own configuration) start with [`sim_only`]
//! and are skipped there with a notice. A fault test starts with
//! [`TestCluster::start_with_faults`] instead and runs in every mode: on a real server its
//! clients go through a [`FaultProxy`], and the cluster injects faults
//! ([`InjectFaults`](crate::fault::InjectFaults)) as the simulator does.

mod capabilities;
mod faults;
mod own;

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::ApiResource;
use kube::discovery::Discovery;
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use testenv::ExistingCluster;
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::config_maps::{State, cm, state_of};
pub use crate::namespace::ns;
use crate::proxy::FaultProxy;

/// What a call of [`TestCluster`] fails with.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// `true`, after a notice naming `what` the test needs of the simulator, when tests run on a
/// real server (an existing cluster or testenv's own control plane): the test returns at once
/// (`if sim_only("fault injection") { return; }`).
pub fn sim_only(what: &str) -> bool {
    testenv::skip_on_existing_cluster(what)
}

/// How often [`TestCluster::replace`] reads again after a conflict on a real server.
const REPLACE_ATTEMPTS: u32 = 10;

/// The turn of the process's tests on a real server.
static TURN: LazyLock<Arc<Mutex<()>>> = LazyLock::new(Arc::default);

/// The API server of a test: a fresh simulator, or the real server of the process's tests.
pub struct TestCluster {
    backend: Backend,
    /// Dropped after `backend`, whose cleanup runs first.
    _turn: Option<OwnedMutexGuard<()>>,
}

enum Backend {
    Simulator(ApiServer),
    Cluster {
        cluster: Box<ExistingCluster>,
        discovery: Box<tokio::sync::OnceCell<Discovery>>,
        /// The proxy every client goes through, in a test that injects faults.
        proxy: Option<Box<FaultProxy>>,
    },
}

impl TestCluster {
    /// A fresh simulator, or — with `KUBE_RT_TEST_KUBECONFIG` or `KUBE_RT_TEST_ASSETS` set —
    /// that existing cluster or the process's control plane (started by the first test that
    /// asks), once the process's earlier tests there are done, with [`ns`]`()` empty. On a real
    /// server a paused tokio clock is resumed: the network does not run on virtual time.
    pub async fn start() -> Result<Self, Error> {
        Self::start_in_mode(false).await
    }

    /// [`TestCluster::start`] for a test that injects faults: on a real server a
    /// [`FaultProxy`] is put in front of it, every client of the cluster ([`TestCluster::client`],
    /// [`TestCluster::config`] and its own seeding calls) goes through it, and the cluster's
    /// [`InjectFaults`](crate::fault::InjectFaults) are the proxy's; on the simulator they are
    /// the simulator's own.
    pub async fn start_with_faults() -> Result<Self, Error> {
        Self::start_in_mode(true).await
    }

    async fn start_in_mode(with_faults: bool) -> Result<Self, Error> {
        if !testenv::on_existing_cluster() {
            return Ok(Self {
                backend: Backend::Simulator(ApiServer::start().await?),
                _turn: None,
            });
        }
        resume_paused_clock();
        let kubeconfig = testenv::control_plane::lane_kubeconfig()
            .await?
            .ok_or("no real server is named")?;
        let turn = Arc::clone(&TURN).lock_owned().await;
        let cluster = ExistingCluster::connect_in(&kubeconfig, ns()).await?;
        let proxy = match with_faults {
            true => Some(Box::new(FaultProxy::start(cluster.config().clone()).await?)),
            false => None,
        };
        Ok(Self {
            backend: Backend::Cluster {
                cluster: Box::new(cluster),
                discovery: Box::default(),
                proxy,
            },
            _turn: Some(turn),
        })
    }

    /// The simulator, when the test runs on one.
    pub fn sim(&self) -> Option<&ApiServer> {
        match &self.backend {
            Backend::Simulator(server) => Some(server),
            Backend::Cluster { .. } => None,
        }
    }

    /// A client whose default namespace is [`ns`]`()` (through the fault proxy, if any).
    pub fn client(&self) -> Result<Client, Error> {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.client()?),
            Backend::Cluster {
                proxy: Some(proxy), ..
            } => Ok(proxy.client()?),
            Backend::Cluster { cluster, .. } => Ok(cluster.client()),
        }
    }

    /// A client configuration of the server (its credentials on a cluster; the fault proxy's
    /// address, which adds them, if there is one), default namespace [`ns`]`()`.
    pub fn config(&self) -> Result<kube::Config, Error> {
        match &self.backend {
            Backend::Simulator(server) => server.test_client_config(),
            Backend::Cluster {
                proxy: Some(proxy), ..
            } => Ok(proxy.config()?),
            Backend::Cluster { cluster, .. } => Ok(cluster.config().clone()),
        }
    }

    /// The server's URL (the fault proxy's, if there is one).
    pub fn url(&self) -> String {
        match &self.backend {
            Backend::Simulator(server) => server.url(),
            Backend::Cluster {
                proxy: Some(proxy), ..
            } => proxy.url(),
            Backend::Cluster { cluster, .. } => cluster.config().cluster_url.to_string(),
        }
    }

    /// The kubeconfig of the cluster (a copy for the simulator, written to `path`); on a real
    /// server, the server's own, not the fault proxy's.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<PathBuf, Error> {
        match &self.backend {
            Backend::Simulator(server) => {
                server.write_kubeconfig(path)?;
                Ok(path.to_owned())
            }
            Backend::Cluster { cluster, .. } => {
                std::fs::copy(cluster.kubeconfig(), path)?;
                Ok(path.to_owned())
            }
        }
    }

    /// Creates `obj` (the simulator stores it directly; a cluster through the API, and a
    /// cluster-scoped object made there is deleted at cleanup).
    pub async fn create<K>(&self, obj: &K) -> Result<K, Error>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.create(obj)?),
            Backend::Cluster { cluster, .. } => {
                let (api, object) = self.dynamic(obj)?;
                let created = api.create(&PostParams::default(), &object).await?;
                if !is_namespaced::<K>() {
                    let name = created.metadata.name.as_deref().unwrap_or_default();
                    cluster.delete_at_cleanup(ApiResource::erase::<K>(&()), name);
                }
                Ok(serde_json::from_value(serde_json::to_value(created)?)?)
            }
        }
    }

    /// Replaces `obj` unconditionally (its resourceVersion is ignored).
    pub async fn replace<K>(&self, obj: &K) -> Result<K, Error>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.replace(obj)?),
            Backend::Cluster { .. } => {
                let (api, mut object) = self.dynamic(obj)?;
                let name = object.metadata.name.clone().unwrap_or_default();
                // Unconditional: a cluster's own controllers may write the object (a
                // Deployment's status) between the read and the replace; read again then.
                let mut attempts = 0;
                loop {
                    let current = api.get(&name).await?;
                    object.metadata.resource_version = current.metadata.resource_version;
                    match api.replace(&name, &PostParams::default(), &object).await {
                        Ok(replaced) => {
                            return Ok(serde_json::from_value(serde_json::to_value(replaced)?)?);
                        }
                        Err(kube::Error::Api(status))
                            if status.code == 409 && attempts < REPLACE_ATTEMPTS =>
                        {
                            attempts += 1;
                        }
                        Err(error) => return Err(error.into()),
                    }
                }
            }
        }
    }

    /// Deletes the object `name` of the resource `group`/`plural`.
    pub async fn delete(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<(), Error> {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.delete(group, plural, namespace, name)?),
            Backend::Cluster { .. } => {
                let resource = self.resource(group, plural).await?;
                let api: Api<DynamicObject> = match namespace {
                    Some(namespace) => Api::namespaced_with(self.client()?, namespace, &resource),
                    None => Api::all_with(self.client()?, &resource),
                };
                api.delete(name, &DeleteParams::default()).await?;
                Ok(())
            }
        }
    }

    /// Every object of `K` (on a cluster: of a namespaced kind, those in [`ns`]`()`).
    pub async fn list<K>(&self) -> Result<Vec<K>, Error>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Clone + std::fmt::Debug,
    {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.list::<K>()),
            Backend::Cluster { .. } => {
                let resource = ApiResource::erase::<K>(&());
                let api: Api<DynamicObject> = if is_namespaced::<K>() {
                    Api::namespaced_with(self.client()?, ns(), &resource)
                } else {
                    Api::all_with(self.client()?, &resource)
                };
                let listed = api.list(&ListParams::default()).await?;
                listed
                    .items
                    .into_iter()
                    .map(|item| Ok(serde_json::from_value(serde_json::to_value(item)?)?))
                    .collect()
            }
        }
    }

    /// The server's current resourceVersion, as a number.
    pub async fn resource_version(&self) -> Result<u64, Error> {
        match &self.backend {
            Backend::Simulator(server) => Ok(server.resource_version()),
            Backend::Cluster { .. } => {
                let api: Api<Namespace> = Api::all(self.client()?);
                let list = api.list_metadata(&ListParams::default().limit(1)).await?;
                Ok(list.metadata.resource_version.unwrap_or_default().parse()?)
            }
        }
    }

    /// Creates or replaces the ConfigMap `name` of [`ns`]`()` with the value `value`.
    pub async fn put(&self, name: &str, value: &str) -> Result<ConfigMap, Error> {
        self.create_or_replace(&cm(name, value)).await
    }

    /// Replaces the ConfigMap `obj`, or creates it if there is none.
    async fn create_or_replace(&self, obj: &ConfigMap) -> Result<ConfigMap, Error> {
        match self.replace(obj).await {
            Ok(stored) => Ok(stored),
            Err(_) => self.create(obj).await,
        }
    }

    /// Deletes the ConfigMap `name` of [`ns`]`()`.
    pub async fn remove(&self, name: &str) -> Result<(), Error> {
        self.delete("", "configmaps", Some(ns()), name).await
    }

    /// The [`State`] of the ConfigMaps in [`ns`]`()`.
    pub async fn state(&self) -> Result<State, Error> {
        let objs = self.list::<ConfigMap>().await?;
        Ok(state_of(objs.iter().filter(|obj| {
            obj.metadata.namespace.as_deref() == Some(ns())
        })))
    }

    /// Stops the simulator, or cleans up the cluster's namespace.
    pub async fn shutdown(self) {
        match self.backend {
            Backend::Simulator(server) => server.shutdown().await,
            Backend::Cluster { cluster, proxy, .. } => {
                if let Err(error) = cluster.cleanup().await {
                    tracing::warn!("cleaning up {}: {error}", ns());
                }
                if let Some(proxy) = proxy {
                    (*proxy).shutdown().await;
                }
            }
        }
    }

    /// `obj` as a dynamic object with the API of its kind and namespace.
    fn dynamic<K>(&self, obj: &K) -> Result<(Api<DynamicObject>, DynamicObject), Error>
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let resource = ApiResource::erase::<K>(&());
        let mut object: DynamicObject = serde_json::from_value(serde_json::to_value(obj)?)?;
        object.types = Some(kube::core::TypeMeta {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
        });
        let api = match (&object.metadata.namespace, is_namespaced::<K>()) {
            (Some(namespace), true) => Api::namespaced_with(self.client()?, namespace, &resource),
            (None, true) => Api::namespaced_with(self.client()?, ns(), &resource),
            (_, false) => Api::all_with(self.client()?, &resource),
        };
        Ok((api, object))
    }

    /// The resource `group`/`plural` as the cluster serves it.
    async fn resource(&self, group: &str, plural: &str) -> Result<ApiResource, Error> {
        let Backend::Cluster { discovery, .. } = &self.backend else {
            return Err("discovery is asked of a cluster only".into());
        };
        let discovery = discovery
            .get_or_try_init(|| async {
                Discovery::new(self.client()?)
                    .run()
                    .await
                    .map_err(Error::from)
            })
            .await?;
        discovery
            .get(group)
            .and_then(|g| {
                g.recommended_resources()
                    .into_iter()
                    .find(|(resource, _)| resource.plural == plural)
            })
            .map(|(resource, _)| resource)
            .ok_or_else(|| format!("the cluster does not serve {plural}.{group}").into())
    }
}

/// What the helpers of the workspace's tests need of a server, the simulator's own handle or a
/// [`TestCluster`].
pub trait Server {
    /// A client of the server, default namespace [`ns`]`()`.
    fn test_client(&self) -> Result<Client, Error>;
    /// A client configuration of the server (with its credentials), to build a client of one's
    /// own.
    fn test_client_config(&self) -> Result<kube::Config, Error>;
    /// Installs `crd` and returns once its custom resources are served.
    fn install_test_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> impl Future<Output = Result<CustomResourceDefinition, Error>>;
    /// Whether this is an existing cluster, shared with others: managers there watch [`ns`]`()`
    /// only.
    fn is_shared(&self) -> bool;
    /// The [`State`] of the ConfigMaps in [`ns`]`()`.
    fn config_map_state(&self) -> impl Future<Output = Result<State, Error>>;
}

impl Server for ApiServer {
    fn test_client(&self) -> Result<Client, Error> {
        Ok(self.client()?)
    }

    fn test_client_config(&self) -> Result<kube::Config, Error> {
        let mut config = kube::Config::new(self.url().parse()?);
        config.default_namespace = ns().to_owned();
        Ok(config)
    }

    async fn install_test_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, Error> {
        Ok(self.install_crd(crd).await?)
    }

    fn is_shared(&self) -> bool {
        false
    }

    async fn config_map_state(&self) -> Result<State, Error> {
        Ok(crate::config_maps::server_state(self))
    }
}

impl<T: Server> Server for Arc<T> {
    fn test_client(&self) -> Result<Client, Error> {
        (**self).test_client()
    }

    fn test_client_config(&self) -> Result<kube::Config, Error> {
        (**self).test_client_config()
    }

    async fn install_test_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, Error> {
        (**self).install_test_crd(crd).await
    }

    fn is_shared(&self) -> bool {
        (**self).is_shared()
    }

    async fn config_map_state(&self) -> Result<State, Error> {
        (**self).config_map_state().await
    }
}

impl Server for TestCluster {
    fn test_client(&self) -> Result<Client, Error> {
        self.client()
    }

    fn test_client_config(&self) -> Result<kube::Config, Error> {
        self.config()
    }

    async fn install_test_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, Error> {
        match &self.backend {
            Backend::Simulator(server) => server.install_test_crd(crd).await,
            Backend::Cluster { cluster, .. } => {
                Ok(cluster.install_crd(crd, Duration::from_secs(30)).await?)
            }
        }
    }

    fn is_shared(&self) -> bool {
        self.sim().is_none()
    }

    async fn config_map_state(&self) -> Result<State, Error> {
        self.state().await
    }
}

/// Whether `K` is namespaced.
fn is_namespaced<K: Resource>() -> bool {
    std::any::type_name::<K::Scope>().ends_with("NamespaceResourceScope")
}

/// Resumes tokio's clock if the test paused it (`start_paused`): a paused clock does not move
/// with the wall clock, so it stands still while the wall clock passes 100 µs.
fn resume_paused_clock() {
    let (wall, clock) = (std::time::Instant::now(), tokio::time::Instant::now());
    while wall.elapsed() < Duration::from_micros(100) {
        std::hint::spin_loop();
    }
    if tokio::time::Instant::now() == clock {
        tokio::time::resume();
    }
}
