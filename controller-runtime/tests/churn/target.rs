//! The server the churn runs against: apiserver-sim in this process (the default, and CI's;
//! chaos as `CHURN_PROFILE` says, event history capped), or the real cluster
//! `KUBE_RT_TEST_KUBECONFIG` names (see `../real/`): a namespace of the run's own, removed at
//! the end, whose garbage the cluster's collector collects (this process plays it on a cluster
//! without one). Against a real server the process measured holds the manager and the driver
//! only.

use std::path::Path;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosProfile};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};

use crate::real::Cluster;

/// Where the simulator run keeps the workload.
const SIM_NAMESPACE: &str = "default";

/// The server under test.
pub enum Target {
    /// apiserver-sim, with its history capped at `history_limit` events.
    Sim {
        server: ApiServer,
        history_limit: u64,
    },
    /// A real cluster.
    Real { cluster: Cluster },
}

impl Target {
    /// Starts the simulator (with chaos when `chaos` names a seed and a profile).
    pub async fn sim(
        history_limit: usize,
        chaos: Option<(u64, ChaosProfile)>,
    ) -> Result<Self, String> {
        let mut builder = ApiServer::builder().history_limit(history_limit);
        if let Some((seed, profile)) = chaos {
            builder = builder.chaos(ChaosConfig { seed, profile });
        }
        let server = builder.start().await.map_err(|e| format!("server: {e}"))?;
        Ok(Self::Sim {
            server,
            history_limit: history_limit as u64,
        })
    }

    /// Connects to the real cluster of the admin kubeconfig `admin` and creates the run's
    /// namespace (and the soak's garbage collector, on a cluster without one).
    pub async fn real(admin: &Path) -> Result<Self, String> {
        let cluster = Cluster::connect(admin, "churn").await?;
        Ok(Self::Real { cluster })
    }

    /// An admin client.
    pub fn client(&self) -> Result<kube::Client, String> {
        match self {
            Self::Sim { server, .. } => server.client().map_err(|e| e.to_string()),
            Self::Real { cluster, .. } => Ok(cluster.client()),
        }
    }

    /// The namespace of the workload (and of the manager's Lease).
    pub fn namespace(&self) -> &str {
        match self {
            Self::Sim { .. } => SIM_NAMESPACE,
            Self::Real { cluster, .. } => cluster.namespace(),
        }
    }

    /// Whether this is a real cluster (where other namespaces hold other objects, so the
    /// manager caches the run's namespace only).
    pub fn is_real(&self) -> bool {
        matches!(self, Self::Real { .. })
    }

    /// The workload's objects on the server.
    pub async fn objects(&self) -> Result<(Vec<ConfigMap>, Vec<Secret>), String> {
        match self {
            Self::Sim { server, .. } => Ok((server.list(), server.list())),
            Self::Real { cluster, .. } => Ok((cluster.list().await?, cluster.list().await?)),
        }
    }

    /// Whether the server's own memory has reached its steady size: the simulator has written
    /// twice its history's worth of events (it runs in the process measured). A real server
    /// runs elsewhere: always.
    pub fn steady(&self) -> bool {
        match self {
            Self::Sim {
                server,
                history_limit,
            } => server.resource_version() > 2 * history_limit,
            Self::Real { .. } => true,
        }
    }

    /// Stops the chaos; what was injected, for the summary.
    pub fn stop_faults(&self) -> String {
        match self {
            Self::Sim { server, .. } => {
                server.stop_chaos();
                format!("faults injected: {}", server.chaos_stats())
            }
            Self::Real { .. } => "real server, no simulated faults".to_owned(),
        }
    }

    /// Shuts the simulator down, or stops the soak's garbage collector if it ran and removes
    /// the run's namespace from the real cluster; who collected the garbage there.
    pub async fn shutdown(self) -> Result<Option<String>, String> {
        match self {
            Self::Sim { server, .. } => {
                server.shutdown().await;
                Ok(None)
            }
            Self::Real { cluster, .. } => cluster.finish().await.map(Some),
        }
    }
}
