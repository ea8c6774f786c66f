//! The garbage collector's part for the soak workload, on a cluster that lacks one (a bare API
//! server, no kube-controller-manager; a whole cluster's own collector does it there, and the
//! simulator's in CI): a Secret whose controlling ConfigMap is gone is deleted (with the
//! Secret's uid as precondition), as kube-controller-manager's garbage collector would do in
//! the background. Without it a ConfigMap deleted and created again under the same name would
//! find the old Secret still controlled by the old ConfigMap, and `mirror` could never take it
//! over.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, ListParams, Preconditions};
use tokio_util::sync::CancellationToken;

/// One pass: deletes the Secrets of `namespace` whose controlling owner no longer exists; how
/// many it deleted. The Secrets are listed before the ConfigMaps: an owner uid that a later
/// list lacks was deleted (uids are never reused), so a Secret is never collected because its
/// owner was created after the list.
async fn collect(client: &kube::Client, namespace: &str) -> Result<usize, kube::Error> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let configs: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let listed = secrets.list(&ListParams::default()).await?.items;
    let owners: BTreeSet<String> = configs
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|c| c.metadata.uid)
        .collect();
    let mut deleted = 0;
    for secret in listed {
        let controller = secret
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true) && r.kind == "ConfigMap");
        let Some(owner) = controller else { continue };
        if owners.contains(&owner.uid) {
            continue;
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: secret.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        let name = secret.metadata.name.clone().unwrap_or_default();
        match secrets.delete(&name, &params).await {
            Ok(_) => deleted += 1,
            // Gone already, or replaced by a new Secret of that name: nothing to collect.
            Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(deleted)
}

/// The collector running in the background: a pass every 200 ms until [`stop`](Self::stop).
pub struct Collector {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<u64>,
}

impl Collector {
    /// Starts collecting in `namespace`.
    pub fn start(client: kube::Client, namespace: String) -> Self {
        let stop = CancellationToken::new();
        let task = tokio::spawn(run(client, namespace, stop.clone()));
        Self { stop, task }
    }

    /// Stops collecting; how many Secrets it deleted.
    pub async fn stop(self) -> u64 {
        self.stop.cancel();
        self.task.await.unwrap_or(0)
    }
}

/// Collects every 200 ms until `stop`; how many Secrets it deleted. A pass that fails (the
/// server unreachable during a restart, for one) is tried again at the next.
async fn run(client: kube::Client, namespace: String, stop: CancellationToken) -> u64 {
    let mut deleted = 0_u64;
    while !stop.is_cancelled() {
        if let Ok(n) = collect(&client, &namespace).await {
            deleted += n as u64;
        }
        tokio::select! {
            () = stop.cancelled() => {}
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    deleted
}
