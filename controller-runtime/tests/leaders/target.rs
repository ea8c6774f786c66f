//! The server the soak runs against: apiserver-sim in chaos mode in this process (the default,
//! and CI's), or the real cluster `KUBE_RT_TEST_KUBECONFIG` names (see `../real/`). What the
//! soak does to and reads from the server goes through here, the same way for both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, FailRule};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;

use crate::Settings;
use crate::member::LEASE;
use crate::real::Cluster;

/// The namespace of the simulator run.
const SIM_NAMESPACE: &str = "default";

/// The server under test.
pub enum Target {
    /// apiserver-sim in chaos mode; the members use the admin kubeconfig it wrote.
    Sim {
        server: Arc<ApiServer>,
        kubeconfig: PathBuf,
    },
    /// A real cluster; the members authenticate as a ServiceAccount of the run's namespace.
    /// The cluster's garbage collector removes the Secrets of deleted ConfigMaps (on a cluster
    /// without one, this process does).
    Real {
        cluster: Cluster,
        members_kubeconfig: PathBuf,
    },
}

impl Target {
    /// Starts the simulator with `settings`' chaos, writing its kubeconfig into `dir`.
    pub async fn sim(settings: &Settings, dir: &Path) -> Result<Self, String> {
        let profile = settings
            .profile
            .ok_or("no chaos profile for the simulator")?;
        let server = ApiServer::builder()
            .bookmark_interval(Duration::from_secs(1))
            .chaos(ChaosConfig {
                seed: settings.seed,
                profile,
            })
            .start()
            .await
            .map_err(|e| format!("server: {e}"))?;
        let kubeconfig = dir.join("kubeconfig");
        server
            .write_kubeconfig(&kubeconfig)
            .map_err(|e| e.to_string())?;
        Ok(Self::Sim {
            server: Arc::new(server),
            kubeconfig,
        })
    }

    /// Connects to the real cluster of the admin kubeconfig `admin`: the run's namespace, who
    /// collects its garbage, the members' ServiceAccount and kubeconfig (in `dir`).
    pub async fn real(admin: &Path, dir: &Path) -> Result<Self, String> {
        let cluster = Cluster::connect(admin, "leaders").await?;
        let members_kubeconfig = dir.join("member-kubeconfig");
        if let Err(e) = cluster.member_access(&members_kubeconfig).await {
            let _ = cluster.finish().await;
            return Err(e);
        }
        Ok(Self::Real {
            cluster,
            members_kubeconfig,
        })
    }

    /// The namespace the workload and the Lease live in.
    pub fn namespace(&self) -> &str {
        match self {
            Self::Sim { .. } => SIM_NAMESPACE,
            Self::Real { cluster, .. } => cluster.namespace(),
        }
    }

    /// The kubeconfig the members get.
    pub fn members_kubeconfig(&self) -> &Path {
        match self {
            Self::Sim { kubeconfig, .. } => kubeconfig,
            Self::Real {
                members_kubeconfig, ..
            } => members_kubeconfig,
        }
    }

    /// An admin client (the driver's).
    pub fn client(&self) -> Result<kube::Client, String> {
        match self {
            Self::Sim { server, .. } => server.client().map_err(|e| e.to_string()),
            Self::Real { cluster, .. } => Ok(cluster.client()),
        }
    }

    /// The real cluster, if this is one.
    pub fn cluster(&self) -> Option<&Cluster> {
        match self {
            Self::Sim { .. } => None,
            Self::Real { cluster, .. } => Some(cluster),
        }
    }

    /// The soak's Lease as the server has it (None: absent, or the server unreachable).
    pub async fn lease(&self) -> Option<LeaseSpec> {
        match self {
            Self::Sim { server, .. } => server
                .list::<Lease>()
                .into_iter()
                .find(|l| l.name_any() == LEASE)
                .and_then(|l| l.spec),
            Self::Real { cluster, .. } => {
                let leases = cluster.api::<Lease>();
                match tokio::time::timeout(Duration::from_secs(2), leases.get_opt(LEASE)).await {
                    Ok(Ok(lease)) => lease.and_then(|l| l.spec),
                    _ => None,
                }
            }
        }
    }

    /// The Lease holder on the server, if any.
    pub async fn lease_holder(&self) -> Option<String> {
        self.lease()
            .await?
            .holder_identity
            .filter(|h| !h.is_empty())
    }

    /// The workload's objects on the server.
    pub async fn objects(&self) -> Result<(Vec<ConfigMap>, Vec<Secret>), String> {
        match self {
            Self::Sim { server, .. } => Ok((server.list(), server.list())),
            Self::Real { cluster, .. } => Ok((cluster.list().await?, cluster.list().await?)),
        }
    }

    /// Makes every Lease write of the members fail: 500s from fail rules on the simulator, a
    /// withdrawn RoleBinding (403 on every Lease request) on a real server, once a Lease read
    /// with the members' credentials is seen refused.
    pub async fn fail_lease_writes(&self, seed: u64) -> Result<(), String> {
        match self {
            Self::Sim { server, .. } => {
                for verb in ["create", "update", "patch"] {
                    server.fail_next(FailRule::random(verb, "leases", 500, 1.0, seed));
                }
                Ok(())
            }
            Self::Real {
                cluster,
                members_kubeconfig,
                ..
            } => {
                cluster.withdraw_leases().await?;
                let took = cluster
                    .await_forbidden(members_kubeconfig, Duration::from_secs(10))
                    .await?;
                println!(
                    "lease rights withdrawn: a member's Lease read is refused with 403 after {took:.1?}"
                );
                Ok(())
            }
        }
    }

    /// Lets the members' Lease writes through again.
    pub async fn restore_lease_writes(&self) -> Result<(), String> {
        match self {
            Self::Sim { server, .. } => {
                server.clear_faults();
                Ok(())
            }
            Self::Real { cluster, .. } => cluster.grant_leases().await,
        }
    }

    /// Stops injecting faults; what was injected, for the summary (and whether any was).
    pub fn stop_faults(&self) -> (String, bool) {
        match self {
            Self::Sim { server, .. } => {
                server.stop_chaos();
                server.clear_faults();
                let faults = server.chaos_stats();
                (format!("faults injected: {faults}"), faults.total() > 0)
            }
            Self::Real { .. } => ("real server, no simulated faults".to_owned(), true),
        }
    }

    /// Ends the run: on a real cluster, stops the soak's garbage collector if it ran and
    /// removes the run's namespace and everything in it; who collected the garbage, for the
    /// summary.
    pub async fn finish(self) -> Result<Option<String>, String> {
        match self {
            Self::Sim { .. } => Ok(None),
            Self::Real { cluster, .. } => cluster.finish().await.map(Some),
        }
    }
}
