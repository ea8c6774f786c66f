//! One control plane per test process and directory of binaries, shared by every environment
//! of the process (each in a scratch namespace of its own, as on an existing cluster): started
//! by the first environment that needs it, never stopped by the process — it ends with it (the
//! servers die with the process, the watchdog removes the files).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use tokio::sync::OnceCell;

use super::ControlPlane;
use crate::error::Error;
use crate::lane::Lane;

/// The process's control planes by (canonical) directory of binaries.
type Registry = HashMap<PathBuf, Arc<OnceCell<Arc<ControlPlane>>>>;

static SHARED: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

impl ControlPlane {
    /// This process's control plane for the binaries in `assets`: the first call starts it
    /// (concurrent calls wait for that start; after a failed start the next call tries again),
    /// later calls get the same one. It is never stopped before the process ends.
    pub async fn shared(assets: impl AsRef<Path>) -> Result<Arc<Self>, Error> {
        let assets = assets.as_ref();
        let key = assets.canonicalize().unwrap_or_else(|_| assets.to_owned());
        let cell = Arc::clone(SHARED.lock().entry(key).or_default());
        cell.get_or_try_init(|| async { Self::start(assets).await.map(Arc::new) })
            .await
            .cloned()
    }
}

/// The kubeconfig of the real API server the environment variables name, for test helpers that
/// take a kubeconfig: [`KUBECONFIG_VAR`](crate::KUBECONFIG_VAR)'s, or that of this process's
/// [`shared`](ControlPlane::shared) control plane from [`ASSETS_VAR`](crate::ASSETS_VAR)'s
/// binaries (started by the first call); `None` on the simulator.
pub async fn lane_kubeconfig() -> Result<Option<PathBuf>, Error> {
    match Lane::from_env().map_err(Error::Lane)? {
        Lane::Simulator => Ok(None),
        Lane::ExistingCluster(kubeconfig) => Ok(Some(kubeconfig)),
        Lane::ControlPlane(assets) => Ok(Some(ControlPlane::shared(assets).await?.kubeconfig())),
    }
}
