//! What an existing cluster runs besides its API server, found out by asking it: whether a
//! garbage collector deletes dependents whose owner is gone, and whether nodes run pods. A bare
//! API server (testenv's own control plane without a controller-manager, a kube-apiserver of
//! one's own) has neither; a whole cluster (kube-controller-manager, a scheduler, kubelets)
//! both. Tests that follow a workload to its end run those steps where the cluster has them and
//! skip them, with a notice, where it does not.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Node};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};
use tokio::time::Instant;

use super::ExistingCluster;
use crate::error::Error;

/// How long the garbage collector may take to delete the probe's dependent. A running collector
/// takes well under a second; a cluster that publishes its root CA but collects nothing in this
/// time is taken to have none.
pub const COLLECT_LIMIT: Duration = Duration::from_secs(60);
/// The probe's owner and its dependent, in the scratch namespace.
const OWNER: &str = "kube-rt-gc-probe-owner";
const DEPENDENT: &str = "kube-rt-gc-probe-dependent";
/// The ConfigMap kube-controller-manager's root CA publisher puts into every namespace.
const ROOT_CA: &str = "kube-root-ca.crt";
/// How often the probe looks for its dependent.
const POLL: Duration = Duration::from_millis(100);

fn config_map(name: &str, owner: Option<OwnerReference>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            owner_references: owner.map(|owner| vec![owner]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

impl ExistingCluster {
    /// Whether the cluster garbage-collects: a ConfigMap owned by another one in the scratch
    /// namespace is deleted by the cluster once its owner is deleted, within [`COLLECT_LIMIT`].
    /// Answered at once, with no probe, `false` when `kube-system` lacks the root CA ConfigMap
    /// (`kube-root-ca.crt`) that kube-controller-manager publishes into every namespace as soon
    /// as it runs: no controller-manager, no garbage collector. The probe's objects are gone
    /// when this returns.
    pub async fn collects_garbage(&self) -> Result<bool, Error> {
        let failed = |what: String| Error::Cluster {
            kubeconfig: self.kubeconfig.clone(),
            message: what,
        };
        let system: Api<ConfigMap> = Api::namespaced(self.client(), "kube-system");
        let published = system
            .get_opt(ROOT_CA)
            .await
            .map_err(|e| failed(format!("reading kube-system/{ROOT_CA}: {e}")))?;
        if published.is_none() {
            return Ok(false);
        }
        let configs: Api<ConfigMap> = Api::namespaced(self.client(), self.namespace());
        let post = PostParams::default();
        let owner = configs
            .create(&post, &config_map(OWNER, None))
            .await
            .map_err(|e| failed(format!("creating the probe's owner {OWNER}: {e}")))?;
        let reference = OwnerReference {
            api_version: "v1".to_owned(),
            kind: "ConfigMap".to_owned(),
            name: OWNER.to_owned(),
            uid: owner.metadata.uid.unwrap_or_default(),
            ..OwnerReference::default()
        };
        // The owner goes whether the dependent was made or not.
        let created = configs
            .create(&post, &config_map(DEPENDENT, Some(reference)))
            .await;
        let deleted = configs.delete(OWNER, &DeleteParams::background()).await;
        created.map_err(|e| failed(format!("creating the probe's dependent {DEPENDENT}: {e}")))?;
        deleted.map_err(|e| failed(format!("deleting the probe's owner {OWNER}: {e}")))?;
        let deadline = Instant::now() + COLLECT_LIMIT;
        loop {
            let left = configs
                .get_opt(DEPENDENT)
                .await
                .map_err(|e| failed(format!("reading the probe's dependent {DEPENDENT}: {e}")))?;
            if left.is_none() {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                configs
                    .delete(DEPENDENT, &DeleteParams::default())
                    .await
                    .map_err(|e| failed(format!("deleting the probe's dependent: {e}")))?;
                return Ok(false);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether the cluster runs pods: one of its nodes is `Ready`. A bare API server has no
    /// node.
    pub async fn runs_pods(&self) -> Result<bool, Error> {
        let nodes = Api::<Node>::all(self.client())
            .list(&ListParams::default())
            .await
            .map_err(|e| Error::Cluster {
                kubeconfig: self.kubeconfig.clone(),
                message: format!("listing nodes: {e}"),
            })?;
        Ok(nodes.items.iter().any(|node| {
            node.status
                .as_ref()
                .and_then(|status| status.conditions.as_ref())
                .is_some_and(|conditions| {
                    conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
                })
        }))
    }
}
