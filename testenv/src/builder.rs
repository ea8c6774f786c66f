//! [`TestEnvBuilder`]: which server to run on, which CRDs to install, how the simulator is
//! configured, how long waits last, and whether webhooks are wired; [`TestEnv::builder`] and
//! [`TestEnv::start`], the ways to a [`TestEnv`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, ApiServerBuilder};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use tokio_util::sync::CancellationToken;

use crate::cluster::ExistingCluster;
use crate::control_plane::ControlPlane;
use crate::crds::{read_crd_dir, read_crd_file};
use crate::env::{Backend, TestEnv};
use crate::error::Error;
use crate::lane::Lane;
use crate::wait::DEFAULT_TIMEOUT;

/// Where a CRD comes from.
enum CrdSource {
    Value(Box<CustomResourceDefinition>),
    File(PathBuf),
    Dir(PathBuf),
}

type Configure = Box<dyn FnOnce(ApiServerBuilder) -> ApiServerBuilder + Send>;

/// Which server the test asked for.
enum ServerChoice {
    /// What the environment variables say ([`Lane::from_env`]).
    Lane,
    /// The process's control plane from this directory of binaries.
    ControlPlane(PathBuf),
    /// This control plane.
    Given(Arc<ControlPlane>),
}

/// The server an environment starts on.
enum Target {
    Simulator,
    Cluster(PathBuf),
    SharedControlPlane(PathBuf),
    ControlPlane(Arc<ControlPlane>),
}

/// Why the test needs the simulator, when [`TestEnvBuilder::server`] configured it.
const CONFIGURED_SIMULATOR: &str = "configuration (TestEnvBuilder::server)";

impl TestEnv {
    /// A builder: CRDs, simulator options, the wait timeout, webhooks.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    /// An environment with no CRDs and the default options.
    pub async fn start() -> Result<Self, Error> {
        Self::builder().start().await
    }
}

/// Builds a [`TestEnv`]; from [`TestEnv::builder`].
#[must_use]
pub struct TestEnvBuilder {
    server: ServerChoice,
    controller_manager: bool,
    crds: Vec<CrdSource>,
    configure: Option<Configure>,
    /// What the test needs of the simulator, if anything.
    needs_simulator: Option<String>,
    timeout: Duration,
    #[cfg(feature = "webhook")]
    webhooks: bool,
}

impl std::fmt::Debug for TestEnvBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnvBuilder")
            .field("crds", &self.crds.len())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for TestEnvBuilder {
    fn default() -> Self {
        Self {
            server: ServerChoice::Lane,
            controller_manager: false,
            crds: Vec::new(),
            configure: None,
            needs_simulator: None,
            timeout: DEFAULT_TIMEOUT,
            #[cfg(feature = "webhook")]
            webhooks: false,
        }
    }
}

impl TestEnvBuilder {
    /// Runs on testenv's own control plane from the binaries in `assets` (`kube-apiserver` and
    /// `etcd`: envtest's layout), whatever the environment variables say: the process's one
    /// control plane for that directory ([`ControlPlane::shared`]: the first environment starts
    /// it, every environment works in a scratch namespace of its own on it, the process's end
    /// stops it). [`ASSETS_VAR`](crate::ASSETS_VAR) does the same for every environment that
    /// names no server.
    pub fn control_plane(mut self, assets: impl Into<PathBuf>) -> Self {
        self.server = ServerChoice::ControlPlane(assets.into());
        self
    }

    /// Runs on `control_plane` (one the test started itself, e.g. with flags of its own),
    /// in a scratch namespace of the environment's own; the environment keeps it running while
    /// it lives.
    pub fn on_control_plane(mut self, control_plane: Arc<ControlPlane>) -> Self {
        self.server = ServerChoice::Given(control_plane);
        self
    }

    /// On testenv's own control plane, also runs kube-controller-manager there (garbage
    /// collector, namespace, workload, ServiceAccount and root-CA controllers …), started by the
    /// first environment that asks and running from then on; its binary must be beside the
    /// others. On the simulator or an existing cluster it changes nothing
    /// ([`TestEnv::control_plane`] tells where it runs).
    pub fn controller_manager(mut self) -> Self {
        self.controller_manager = true;
        self
    }

    /// Installs `crd` at start, e.g. `Foo::crd()` of a `#[derive(CustomResource)]` type.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(CrdSource::Value(Box::new(crd)));
        self
    }

    /// Installs every CRD of the YAML file `path` (one or more `---`-separated documents).
    pub fn crd_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.crds.push(CrdSource::File(path.into()));
        self
    }

    /// Installs every CRD of the `.yaml`/`.yml` files in `dir` (envtest's `CRDDirectoryPaths`).
    pub fn crd_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crds.push(CrdSource::Dir(dir.into()));
        self
    }

    /// Configures the simulator before it starts (its workload simulator, chaos, service
    /// endpoints, limits …). The test then needs the simulator: on an existing cluster
    /// [`start`](Self::start) fails with [`Error::SimulatorRequired`] and
    /// [`start_or_skip`](Self::start_or_skip) skips it.
    pub fn server(
        mut self,
        configure: impl FnOnce(ApiServerBuilder) -> ApiServerBuilder + Send + 'static,
    ) -> Self {
        self.configure = Some(Box::new(configure));
        self.needs_simulator
            .get_or_insert_with(|| CONFIGURED_SIMULATOR.to_owned());
        self
    }

    /// Declares that the test needs `what` of the simulator (fault injection, virtual time,
    /// its own view of the objects …): on an existing cluster [`start`](Self::start) fails with
    /// [`Error::SimulatorRequired`] and [`start_or_skip`](Self::start_or_skip) skips it.
    pub fn require_simulator(mut self, what: impl Into<String>) -> Self {
        self.needs_simulator = Some(what.into());
        self
    }

    /// How long [`TestEnv::eventually`] and the other waits of the environment last (default
    /// [`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Wires admission and conversion webhooks: the environment makes a CA and a serving
    /// certificate for 127.0.0.1, [`TestEnv::manager_builder`] gives managers a webhook server on
    /// a free loopback port presenting it, and
    /// [`RunningManager::install_webhooks`](crate::RunningManager::install_webhooks) routes the
    /// simulator to that server.
    #[cfg(feature = "webhook")]
    pub fn webhooks(mut self) -> Self {
        self.webhooks = true;
        self
    }

    /// Like [`start`](Self::start), but a test that needs the simulator gets `None` on an
    /// existing cluster, after a notice that it is skipped:
    /// `let Some(env) = TestEnv::builder().server(…).start_or_skip().await? else { return Ok(()) };`.
    pub async fn start_or_skip(self) -> Result<Option<TestEnv>, Error> {
        match self.start().await {
            Ok(env) => Ok(Some(env)),
            Err(Error::SimulatorRequired { what }) => {
                crate::skip::notice(&what);
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// Starts the simulator on a free loopback port — or connects to the real API server the
    /// builder or the environment variables name (an existing cluster, testenv's own control
    /// plane) and creates a scratch namespace there — and installs the CRDs, each established
    /// and served before this returns.
    pub async fn start(self) -> Result<TestEnv, Error> {
        let mut crds = Vec::new();
        for source in self.crds {
            match source {
                CrdSource::Value(crd) => crds.push(*crd),
                CrdSource::File(path) => crds.extend(read_crd_file(&path)?),
                CrdSource::Dir(dir) => crds.extend(read_crd_dir(&dir)?),
            }
        }
        #[cfg(feature = "webhook")]
        let certs = if self.webhooks {
            Some(crate::webhook::ServingCerts::generate(
                "kube-rt-testenv",
                &crate::webhook::loopback_names(),
            )?)
        } else {
            None
        };
        let target = match self.server {
            ServerChoice::Lane => match Lane::from_env().map_err(Error::Lane)? {
                Lane::Simulator => Target::Simulator,
                Lane::ExistingCluster(kubeconfig) => Target::Cluster(kubeconfig),
                Lane::ControlPlane(assets) => Target::SharedControlPlane(assets),
            },
            ServerChoice::ControlPlane(assets) => Target::SharedControlPlane(assets),
            ServerChoice::Given(plane) => Target::ControlPlane(plane),
        };
        if let (Some(what), false) = (self.needs_simulator, matches!(target, Target::Simulator)) {
            return Err(Error::SimulatorRequired { what });
        }
        let (backend, control_plane) = match target {
            Target::Simulator => {
                let builder = ApiServer::builder();
                let builder = match self.configure {
                    Some(configure) => configure(builder),
                    None => builder,
                };
                (Backend::Simulator(builder.start().await?), None)
            }
            Target::Cluster(kubeconfig) => {
                let cluster = ExistingCluster::connect(&kubeconfig).await?;
                (Backend::Cluster(Box::new(cluster)), None)
            }
            Target::SharedControlPlane(assets) => {
                let plane = ControlPlane::shared(&assets).await?;
                on_control_plane(plane, self.controller_manager).await?
            }
            Target::ControlPlane(plane) => on_control_plane(plane, self.controller_manager).await?,
        };
        let client = match &backend {
            Backend::Simulator(server) => server.client()?,
            Backend::Cluster(cluster) => cluster.client(),
        };
        let shutdown = CancellationToken::new();
        let env = TestEnv {
            client,
            timeout: self.timeout,
            _stop_on_drop: shutdown.clone().drop_guard(),
            shutdown,
            #[cfg(feature = "webhook")]
            certs,
            backend,
            control_plane,
        };
        for crd in &crds {
            env.install_crd(crd).await?;
        }
        Ok(env)
    }
}

/// A scratch namespace on `plane`, after starting its controller-manager if asked.
async fn on_control_plane(
    plane: Arc<ControlPlane>,
    controller_manager: bool,
) -> Result<(Backend, Option<Arc<ControlPlane>>), Error> {
    if controller_manager {
        plane.start_controller_manager().await?;
    }
    let cluster = ExistingCluster::connect(&plane.kubeconfig()).await?;
    Ok((Backend::Cluster(Box::new(cluster)), Some(plane)))
}
