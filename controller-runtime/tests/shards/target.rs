//! The server a run of the soak (or of the negative run) works against: apiserver-sim in this
//! process (the default, and CI's; chaos as `SHARDS_PROFILE` says), or the real cluster
//! `KUBE_RT_TEST_KUBECONFIG` names (see `../real/`): a namespace of the run's own, removed at
//! the end; the shards authenticating as a ServiceAccount of it, so that withdrawing its Lease
//! RoleBinding makes their Lease writes real 403s; the cluster's garbage collector deleting
//! the Secrets of deleted ConfigMaps (the simulator's own does in CI). What the parent does to
//! and reads from the server goes through here, the same way for both.

use std::path::{Path, PathBuf};
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, FailRule};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::real::Cluster;

/// The namespace of the objects and of the shard Leases on the simulator.
const SIM_NAMESPACE: &str = "default";

/// The server under test.
pub enum Target {
    /// apiserver-sim; the shards use the admin kubeconfig it wrote.
    Sim {
        server: ApiServer,
        kubeconfig: PathBuf,
    },
    /// A real cluster; the shards use the kubeconfig of the run's ServiceAccount.
    Real {
        cluster: Cluster,
        members_kubeconfig: PathBuf,
    },
}

impl Target {
    /// Starts the simulator (in chaos mode with `chaos`), writing its kubeconfig into `dir`.
    pub async fn sim(chaos: Option<ChaosConfig>, dir: &Path) -> Result<Self, String> {
        let mut server = ApiServer::builder().bookmark_interval(Duration::from_secs(1));
        if let Some(chaos) = chaos {
            server = server.chaos(chaos);
        }
        let server = server.start().await.map_err(|e| format!("server: {e}"))?;
        let kubeconfig = dir.join("kubeconfig");
        server
            .write_kubeconfig(&kubeconfig)
            .map_err(|e| e.to_string())?;
        Ok(Self::Sim { server, kubeconfig })
    }

    /// Connects to the real cluster of the admin kubeconfig `admin`: the run's namespace
    /// (`kube-rt-<run>-…`), who collects its garbage, the shards' ServiceAccount and
    /// kubeconfig (in `dir`).
    pub async fn real(admin: &Path, run: &str, dir: &Path) -> Result<Self, String> {
        let cluster = Cluster::connect(admin, run).await?;
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

    /// The namespace of the objects and the shard Leases.
    pub fn namespace(&self) -> &str {
        match self {
            Self::Sim { .. } => SIM_NAMESPACE,
            Self::Real { cluster, .. } => cluster.namespace(),
        }
    }

    /// The kubeconfig the shards get.
    pub fn members_kubeconfig(&self) -> &Path {
        match self {
            Self::Sim { kubeconfig, .. } => kubeconfig,
            Self::Real {
                members_kubeconfig, ..
            } => members_kubeconfig,
        }
    }

    /// An admin client (the parent's).
    pub fn client(&self) -> Result<kube::Client, String> {
        match self {
            Self::Sim { server, .. } => server.client().map_err(|e| e.to_string()),
            Self::Real { cluster, .. } => Ok(cluster.client()),
        }
    }

    /// How often the parent polls the shard Leases: the simulator's store is read in memory,
    /// a real server over HTTP.
    pub fn poll_interval(&self) -> Duration {
        match self {
            Self::Sim { .. } => Duration::from_millis(10),
            Self::Real { .. } => Duration::from_millis(20),
        }
    }

    /// The Leases of the namespace.
    pub async fn leases(&self) -> Result<Vec<Lease>, String> {
        match self {
            Self::Sim { server, .. } => Ok(server.list()),
            Self::Real { cluster, .. } => cluster.list().await,
        }
    }

    /// The workload's objects on the server.
    pub async fn objects(&self) -> Result<(Vec<ConfigMap>, Vec<Secret>), String> {
        match self {
            Self::Sim { server, .. } => Ok((server.list(), server.list())),
            Self::Real { cluster, .. } => Ok((cluster.list().await?, cluster.list().await?)),
        }
    }

    /// Creates `count` ConfigMaps `cm-0` … in the namespace, unlabelled: in the simulator's
    /// store at once, on a real server one create after another.
    pub async fn seed(&self, count: usize) -> Result<(), String> {
        let namespace = self.namespace().to_owned();
        let objects = (0..count).map(|i| {
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i}"), "namespace": namespace},
                "data": {"k0": i.to_string()},
            })
        });
        match self {
            Self::Sim { server, .. } => server
                .create_many(objects)
                .map(drop)
                .map_err(|e| format!("seeding: {e}")),
            Self::Real { cluster, .. } => {
                let configs: Api<ConfigMap> = cluster.api();
                for object in objects {
                    let config: ConfigMap =
                        serde_json::from_value(object).map_err(|e| format!("seeding: {e}"))?;
                    configs
                        .create(&PostParams::default(), &config)
                        .await
                        .map_err(|e| format!("seeding: {e}"))?;
                }
                Ok(())
            }
        }
    }

    /// Makes every Lease write of the shards fail: 500s from fail rules on the simulator, a
    /// withdrawn RoleBinding (403 on every Lease request) on a real server, once a Lease read
    /// with the shards' credentials is seen refused.
    pub async fn fail_lease_writes(&self, seed: u64) -> Result<(), String> {
        match self {
            Self::Sim { server, .. } => {
                for verb in ["create", "update", "patch"] {
                    server.fail_next(
                        FailRule::random(verb, "leases", 500, 1.0, seed)
                            .in_namespace(SIM_NAMESPACE),
                    );
                }
                Ok(())
            }
            Self::Real {
                cluster,
                members_kubeconfig,
            } => {
                cluster.withdraw_leases().await?;
                cluster
                    .await_forbidden(members_kubeconfig, Duration::from_secs(10))
                    .await
                    .map(drop)
            }
        }
    }

    /// Lets the shards' Lease writes through again.
    pub async fn restore_lease_writes(&self) -> Result<(), String> {
        match self {
            Self::Sim { server, .. } => {
                server.clear_faults();
                Ok(())
            }
            Self::Real { cluster, .. } => cluster.grant_leases().await,
        }
    }

    /// Stops injecting faults; what was injected, for the summary, and how many faults.
    pub fn stop_faults(&self) -> (String, u64) {
        match self {
            Self::Sim { server, .. } => {
                server.stop_chaos();
                server.clear_faults();
                let faults = server.chaos_stats();
                (format!("faults injected: {faults}"), faults.total())
            }
            Self::Real { .. } => ("real server, no simulated faults".to_owned(), 0),
        }
    }

    /// Ends the run: shuts the simulator down, or removes the run's namespace and everything
    /// in it from the real cluster (and says who collected its garbage).
    pub async fn finish(self) -> Result<Option<String>, String> {
        match self {
            Self::Sim { server, .. } => {
                server.shutdown().await;
                Ok(None)
            }
            Self::Real { cluster, .. } => cluster.finish().await.map(Some),
        }
    }
}
