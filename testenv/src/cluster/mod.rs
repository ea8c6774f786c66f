//! An existing cluster instead of the simulator (controller-runtime envtest's
//! `UseExistingCluster`): the cluster of the kubeconfig that [`KUBECONFIG_VAR`] names, a scratch
//! namespace of the environment's own, CRDs installed through the API, and the cleanup of
//! everything the environment made there.

mod capabilities;
mod cleanup;
mod crds;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::ApiResource;
use kube::{Api, Client};
use parking_lot::Mutex;

use crate::error::Error;

pub use crate::lane::{KUBECONFIG_VAR, named_kubeconfig, on_existing_cluster};
pub use capabilities::COLLECT_LIMIT;
pub use cleanup::{NAMESPACE_GONE_LIMIT, empty_namespace};

/// The label every scratch namespace carries, so a crashed run's leftovers can be found
/// (`kubectl get ns -l kube-rt.dev/testenv`).
pub const SCRATCH_LABEL: &str = "kube-rt.dev/testenv";

/// The client configuration of the current context of the kubeconfig at `path`.
pub async fn config_from(path: &Path) -> Result<kube::Config, Error> {
    let cluster_error = |message: String| Error::Cluster {
        kubeconfig: path.to_owned(),
        message,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| cluster_error(e.to_string()))?;
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| cluster_error(e.to_string()))
}

/// A client of the current context of the kubeconfig at `path` (with that context's
/// credentials and default namespace): for a second identity beside an [`ExistingCluster`]'s,
/// a ServiceAccount's kubeconfig for one.
pub async fn client_from(path: &Path) -> Result<Client, Error> {
    let config = config_from(path).await?;
    Client::try_from(config).map_err(|e| Error::Cluster {
        kubeconfig: path.to_owned(),
        message: e.to_string(),
    })
}

/// A cluster-scoped object the environment made, deleted at cleanup.
#[derive(Debug, Clone)]
pub(crate) struct ClusterObject {
    pub(crate) resource: ApiResource,
    pub(crate) name: String,
}

/// What an environment made on an existing cluster besides its scratch namespace.
#[derive(Debug, Clone, Default)]
pub(crate) struct Made {
    /// Cluster-scoped objects (webhook configurations).
    pub(crate) objects: Vec<ClusterObject>,
    /// Namespaces of the test's own besides the scratch namespace.
    pub(crate) namespaces: Vec<String>,
}

/// What a manager's webhook configurations need of an existing cluster: the namespace they are
/// limited to (other tests share the cluster), and where to record them for cleanup.
#[derive(Debug, Clone)]
pub(crate) struct ClusterScope {
    pub(crate) namespace: String,
    made: Arc<Mutex<Made>>,
}

impl ClusterScope {
    /// Records a cluster-scoped object the environment made, to delete it at cleanup.
    pub(crate) fn record(&self, resource: ApiResource, name: &str) {
        let objects = &mut self.made.lock().objects;
        if !objects
            .iter()
            .any(|o| o.name == name && o.resource == resource)
        {
            objects.push(ClusterObject {
                resource,
                name: name.to_owned(),
            });
        }
    }

    fn take(&self) -> Made {
        std::mem::take(&mut *self.made.lock())
    }
}

/// A connection to an existing cluster with a scratch namespace of its own. Its client's
/// default namespace is that namespace. [`cleanup`](Self::cleanup) (or dropping it) deletes
/// what is in the namespace, the namespace, the further namespaces of
/// [`namespace_of_its_own`](Self::namespace_of_its_own), and the cluster-scoped objects the
/// environment made (webhook configurations); CRDs stay installed, as envtest leaves them by
/// default.
pub struct ExistingCluster {
    config: kube::Config,
    client: Client,
    kubeconfig: PathBuf,
    scope: ClusterScope,
    cleaned: bool,
}

impl std::fmt::Debug for ExistingCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExistingCluster")
            .field("server", &self.config.cluster_url.to_string())
            .field("namespace", &self.scope.namespace)
            .finish_non_exhaustive()
    }
}

impl ExistingCluster {
    /// Connects to the current context of the kubeconfig at `path` and creates a scratch
    /// namespace (`kube-rt-test-<random>`, labelled [`SCRATCH_LABEL`]).
    pub async fn connect(path: &Path) -> Result<Self, Error> {
        Self::connect_prefixed(path, "kube-rt-test").await
    }

    /// Like [`connect`](Self::connect), with the scratch namespace `<prefix>-<random>`: a name
    /// that tells whose it is (`kube-rt-leaders-…` for a soak), different in every run.
    pub async fn connect_prefixed(path: &Path, prefix: &str) -> Result<Self, Error> {
        Self::connect_in(path, &format!("{prefix}-{}", random_suffix())).await
    }

    /// Like [`connect`](Self::connect), with the scratch namespace `namespace`: created unless
    /// it exists (a leftover of a run that crashed is emptied first), deleted at cleanup.
    pub async fn connect_in(path: &Path, namespace: &str) -> Result<Self, Error> {
        let cluster_error = |message: String| Error::Cluster {
            kubeconfig: path.to_owned(),
            message,
        };
        let mut config = config_from(path).await?;
        let namespace = namespace.to_owned();
        config.default_namespace.clone_from(&namespace);
        let client = Client::try_from(config.clone()).map_err(|e| cluster_error(e.to_string()))?;
        let scratch = Namespace {
            metadata: ObjectMeta {
                name: Some(namespace.clone()),
                labels: Some([(SCRATCH_LABEL.to_owned(), "true".to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        match Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &scratch)
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {
                // A leftover: emptied, so the test starts from nothing.
                empty_namespace(&client, &namespace)
                    .await
                    .map_err(cluster_error)?;
            }
            Err(e) => {
                return Err(cluster_error(format!(
                    "creating namespace {namespace}: {e}"
                )));
            }
        }
        // Pods need their namespace's `default` ServiceAccount, which a bare API server (no
        // controller-manager) never makes; on a full cluster its controller may be first.
        let account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            ..ServiceAccount::default()
        };
        match Api::<ServiceAccount>::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), &account)
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(e) => {
                return Err(cluster_error(format!(
                    "creating the default ServiceAccount of {namespace}: {e}"
                )));
            }
        }
        crate::skip::reached_notice(&namespace);
        Ok(Self {
            config,
            client,
            kubeconfig: path.to_owned(),
            scope: ClusterScope {
                namespace,
                made: Arc::default(),
            },
            cleaned: false,
        })
    }

    /// A client of the cluster whose default namespace is the scratch namespace.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The client configuration (credentials of the kubeconfig's current context).
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// The kubeconfig file the cluster was named by.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The scratch namespace.
    pub fn namespace(&self) -> &str {
        &self.scope.namespace
    }

    /// The name of a further namespace of the test's own, `<scratch namespace>-<name>` (for a
    /// test of several namespaces): the test creates it, the cleanup empties and deletes it.
    pub fn namespace_of_its_own(&self, name: &str) -> String {
        let namespace = format!("{}-{name}", self.scope.namespace);
        let namespaces = &mut self.scope.made.lock().namespaces;
        if !namespaces.contains(&namespace) {
            namespaces.push(namespace.clone());
        }
        namespace
    }

    /// Records a cluster-scoped object the test made, to delete it at cleanup (a namespace is
    /// emptied and deleted as the scratch namespace is).
    pub fn delete_at_cleanup(&self, resource: ApiResource, name: &str) {
        if resource.kind == "Namespace" && resource.group.is_empty() {
            let namespaces = &mut self.scope.made.lock().namespaces;
            if !namespaces.iter().any(|n| n == name) {
                namespaces.push(name.to_owned());
            }
        } else {
            self.scope.record(resource, name);
        }
    }

    /// The scratch namespace and the record of cluster-scoped objects made.
    pub(crate) fn scope(&self) -> ClusterScope {
        self.scope.clone()
    }

    /// Deletes what the environment made: the cluster-scoped objects recorded, then each of its
    /// namespaces as the namespace controller would remove it — deleted (`Terminating`: nothing
    /// new is created in it), emptied (every object, its finalizers removed first: a bare API
    /// server runs no controller that would), finalized if no namespace controller does it —
    /// returning once they are gone (or failing after [`NAMESPACE_GONE_LIMIT`]).
    pub async fn cleanup(mut self) -> Result<(), Error> {
        self.cleaned = true;
        let made = self.scope.take();
        cleanup::run(&self.client, &self.scope.namespace, &made)
            .await
            .map_err(|message| Error::Cluster {
                kubeconfig: self.kubeconfig.clone(),
                message,
            })
    }
}

impl Drop for ExistingCluster {
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        let made = self.scope.take();
        if let Err(message) = cleanup::blocking(&self.config, &self.scope.namespace, made) {
            tracing::warn!(namespace = %self.scope.namespace, "cleaning up the test namespace: {message}");
        }
    }
}

/// Eight hex digits, different in every environment of every process.
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:08x}", hasher.finish() & 0xffff_ffff)
}
