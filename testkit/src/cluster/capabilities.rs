//! What a [`TestCluster`]'s server runs besides the API: the simulator collects garbage itself;
//! a real server does when a controller-manager runs (a whole cluster), not a bare API server
//! (testenv's own control plane without one).

use super::{Backend, Error, TestCluster};

impl TestCluster {
    /// Whether dependents whose owner is gone are deleted: always on the simulator; on a real
    /// server when it runs a garbage collector, asked of it
    /// ([`ExistingCluster::collects_garbage`](testenv::ExistingCluster::collects_garbage)).
    pub async fn collects_garbage(&self) -> Result<bool, Error> {
        match &self.backend {
            Backend::Simulator(_) => Ok(true),
            Backend::Cluster { cluster, .. } => Ok(cluster.collects_garbage().await?),
        }
    }
}
