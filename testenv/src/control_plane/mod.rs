//! testenv's own control plane, controller-runtime envtest's default mode: etcd and
//! kube-apiserver — and, when asked, kube-controller-manager — started from a directory of
//! binaries in envtest's layout (`KUBEBUILDER_ASSETS`), on free loopback ports, with
//! credentials of their own, and stopped with their files removed at the end.
//!
//! - **Credentials**: a CA and the API server's serving certificate (for 127.0.0.1, `localhost`
//!   and the `kubernetes` Service's names), an admin token in a token file (group
//!   `system:masters`), a ServiceAccount signing key; authorization by RBAC alone. The admin
//!   kubeconfig is [`ControlPlane::kubeconfig`].
//! - **Start**: etcd and kube-apiserver start together (the API server waits for etcd by
//!   itself), and `/readyz` is asked every 50 ms; a port another process took in between makes
//!   the start try again on new ports. The work runs on a thread and runtime of its own, so a
//!   caller's paused clock or short-lived runtime does not matter.
//! - **Stop**: dropping the [`ControlPlane`] kills its servers and removes its data directory. A
//!   test process has no global teardown, though, and ends without dropping statics (the
//!   [`shared`](ControlPlane::shared) control plane is one) or, killed, without running anything
//!   at all. So the servers also die with the process — on Linux by the kernel (a parent-death
//!   signal set in the child before it runs the binary) — and a watchdog process, whose standard
//!   input is a pipe only the test process holds, sees that pipe close when the process ends
//!   however it ends, kills the servers and removes the directory.
//!
//! Unix only (the watchdog is a `/bin/sh` script); the parent-death signal is Linux's.

mod assets;
mod files;
mod flags;
mod process;
mod ready;
mod services;
mod shared;
mod start;
mod watchdog;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use parking_lot::Mutex;
use tempfile::TempDir;

use crate::error::Error;
use files::{Credentials, Layout};
use process::Server;
use watchdog::Watchdog;

pub use shared::lane_kubeconfig;

/// How long a start waits for the API server (or the controller-manager) unless told
/// otherwise: generous, for a loaded machine; an idle one needs a few seconds.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

/// A control plane of the test's own: etcd, kube-apiserver and, when asked, kube-controller-
/// manager, running from a directory of binaries. Dropping it (or [`stop`](Self::stop)) kills
/// them and removes their data directory; so does the end of the test process, however it ends
/// (see the [module documentation](self)).
pub struct ControlPlane {
    /// First: killed before the watchdog is dismissed and the directory removed.
    servers: Mutex<Vec<Server>>,
    watchdog: Arc<Mutex<Watchdog>>,
    controller_manager: tokio::sync::OnceCell<()>,
    assets: PathBuf,
    layout: Layout,
    url: String,
    credentials: Credentials,
    startup_timeout: Duration,
    /// Last: removed once the servers are gone.
    dir: TempDir,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("url", &self.url)
            .field("assets", &self.assets)
            .field("dir", &self.dir.path())
            .field("processes", &self.processes())
            .finish_non_exhaustive()
    }
}

/// A process of a control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Process {
    /// Its binary's name: `etcd`, `kube-apiserver`, `kube-controller-manager`.
    pub name: &'static str,
    /// Its process id.
    pub pid: u32,
}

impl ControlPlane {
    /// A builder for a control plane from the binaries in `assets` (`kube-apiserver`, `etcd`,
    /// and `kube-controller-manager` if it is asked for).
    pub fn builder(assets: impl Into<PathBuf>) -> ControlPlaneBuilder {
        ControlPlaneBuilder {
            assets: assets.into(),
            controller_manager: false,
            api_server_flags: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        }
    }

    /// A control plane from the binaries in `assets`, with the defaults (no controller-manager).
    pub async fn start(assets: impl Into<PathBuf>) -> Result<Self, Error> {
        Self::builder(assets).start().await
    }

    /// The admin kubeconfig (a file in the data directory; its CA is a file beside it).
    pub fn kubeconfig(&self) -> PathBuf {
        self.layout.kubeconfig()
    }

    /// The API server's URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA certificate (PEM) that signed the API server's serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.credentials.ca_pem
    }

    /// The admin's client configuration (default namespace `default`).
    pub fn config(&self) -> Result<kube::Config, Error> {
        start::admin_config(&self.url, &self.credentials).map_err(|message| self.error(message))
    }

    /// An admin client, on the caller's runtime.
    pub fn client(&self) -> Result<Client, Error> {
        Client::try_from(self.config()?).map_err(|e| self.error(e.to_string()))
    }

    /// The data directory: etcd's data, the credentials, the kubeconfig, and each server's log
    /// (`<binary>.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The directory of binaries it runs.
    pub fn assets(&self) -> &Path {
        &self.assets
    }

    /// Its running processes.
    pub fn processes(&self) -> Vec<Process> {
        self.servers
            .lock()
            .iter()
            .map(|server| Process {
                name: server.name(),
                pid: server.pid(),
            })
            .collect()
    }

    /// Whether kube-controller-manager runs.
    pub fn has_controller_manager(&self) -> bool {
        self.controller_manager.initialized()
    }

    /// Starts kube-controller-manager (from the same directory of binaries) unless it runs, and
    /// returns once its controllers work. Concurrent calls start it once.
    pub async fn start_controller_manager(&self) -> Result<(), Error> {
        self.controller_manager
            .get_or_try_init(|| async {
                let server = start::controller_manager(
                    &self.assets,
                    &self.layout,
                    &self.url,
                    &self.credentials,
                    Arc::clone(&self.watchdog),
                    self.startup_timeout,
                )
                .await
                .map_err(|message| self.error(message))?;
                self.servers.lock().push(server);
                Ok(())
            })
            .await
            .copied()
    }

    /// Kills the servers and removes the data directory (what dropping it does).
    pub fn stop(self) {
        drop(self);
    }

    fn error(&self, message: String) -> Error {
        Error::ControlPlane {
            assets: self.assets.clone(),
            message,
        }
    }
}

/// Builds a [`ControlPlane`]; from [`ControlPlane::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ControlPlaneBuilder {
    assets: PathBuf,
    controller_manager: bool,
    api_server_flags: Vec<String>,
    startup_timeout: Duration,
}

impl ControlPlaneBuilder {
    /// Also starts kube-controller-manager (garbage collector, namespace, workload,
    /// ServiceAccount and root-CA controllers …); its binary must be in the directory.
    pub fn controller_manager(mut self) -> Self {
        self.controller_manager = true;
        self
    }

    /// Passes `flag` (`--name=value`) to kube-apiserver after testenv's own, e.g.
    /// `--enable-admission-plugins=OwnerReferencesPermissionEnforcement`.
    pub fn api_server_flag(mut self, flag: impl Into<String>) -> Self {
        self.api_server_flags.push(flag.into());
        self
    }

    /// How long the start waits for each server to be ready (default
    /// [`DEFAULT_STARTUP_TIMEOUT`]).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Starts the servers and returns once the API server is ready (and the controller-manager
    /// works, if asked for).
    pub async fn start(self) -> Result<ControlPlane, Error> {
        let assets = self.assets.clone();
        let error = |message| Error::ControlPlane {
            assets: assets.clone(),
            message,
        };
        let plane = start::on_own_thread(move || start::control_plane(self))
            .await
            .map_err(error)?
            .map_err(error)?;
        Ok(plane)
    }
}
