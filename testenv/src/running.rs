//! [`RunningManager`]: a manager started by [`TestEnv::start_manager`](crate::TestEnv::start_manager).

use std::sync::Arc;
use std::time::Duration;

use controller_runtime::manager::{self, Manager};
use kube::Client;
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::wait::eventually;

/// A manager running in the background of a test. Stops with its
/// [`TestEnv`](crate::TestEnv), or earlier with [`stop`](Self::stop), which also reports
/// whether it failed.
pub struct RunningManager {
    manager: Arc<Manager>,
    task: JoinHandle<Result<(), manager::Error>>,
    pub(crate) timeout: Duration,
    pub(crate) client: Client,
    #[cfg(feature = "webhook")]
    pub(crate) ca_pem: Option<Vec<u8>>,
    /// On an existing cluster: the namespace webhook configurations are limited to, and the
    /// record of them for cleanup.
    #[cfg(feature = "webhook")]
    pub(crate) cluster: Option<crate::cluster::ClusterScope>,
}

impl std::fmt::Debug for RunningManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningManager")
            .field("manager", &self.manager)
            .field("finished", &self.task.is_finished())
            .finish_non_exhaustive()
    }
}

impl RunningManager {
    /// Starts `manager` in the background; `timeout` bounds the waits, `client` writes the
    /// webhook configurations, `ca_pem` is the CA of the webhook server's certificate, `cluster`
    /// the scope of an existing cluster's webhook configurations.
    pub(crate) fn start(
        manager: Manager,
        timeout: Duration,
        client: Client,
        #[cfg(feature = "webhook")] ca_pem: Option<Vec<u8>>,
        #[cfg(feature = "webhook")] cluster: Option<crate::cluster::ClusterScope>,
    ) -> Self {
        let manager = Arc::new(manager);
        let task = tokio::spawn({
            let manager = Arc::clone(&manager);
            async move { manager.start().await }
        });
        Self {
            manager,
            task,
            timeout,
            client,
            #[cfg(feature = "webhook")]
            ca_pem,
            #[cfg(feature = "webhook")]
            cluster,
        }
    }

    /// The manager (its cache, metrics, leadership …).
    pub fn manager(&self) -> &Manager {
        &self.manager
    }

    /// Waits until the manager's caches synced and its runnables started; fails if the manager
    /// stops first (with its error, if it failed) or the environment's timeout passes.
    pub async fn wait_synced(&mut self) -> Result<(), Error> {
        let manager = Arc::clone(&self.manager);
        let task = &self.task;
        let synced = eventually("the manager's caches to sync", self.timeout, || {
            let done = manager.has_synced() || task.is_finished();
            async move { done }
        })
        .await;
        if self.task.is_finished() && !self.manager.has_synced() {
            return Err(self.join().await.err().unwrap_or(Error::ManagerStopped {
                what: "its caches to sync".to_owned(),
            }));
        }
        synced
    }

    /// Whether the manager has stopped (by itself: a failure, or its shutdown token).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Requests the manager's shutdown and waits for it: `Ok` if it stopped cleanly, its error
    /// if it failed (a cache that never synced, a runnable that failed, a shutdown that timed
    /// out), [`Error::ManagerPanicked`] if its task panicked.
    pub async fn stop(mut self) -> Result<(), Error> {
        self.manager.shutdown_handle().shutdown();
        self.join().await
    }

    async fn join(&mut self) -> Result<(), Error> {
        match (&mut self.task).await {
            Ok(result) => Ok(result?),
            Err(error) => Err(Error::ManagerPanicked(error.to_string())),
        }
    }
}
