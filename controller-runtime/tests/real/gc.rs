//! The garbage collector's part for the soak workload, which a bare API server lacks: a Secret
//! whose controlling ConfigMap is gone is deleted (with the Secret's uid as precondition), as
//! kube-controller-manager's garbage collector would do in the background. Without it a
//! ConfigMap deleted and created again under the same name would find the old Secret still
//! controlled by the old ConfigMap, and `mirror` could never take it over.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, ListParams, Preconditions};
use tokio_util::sync::CancellationToken;

/// One pass: deletes the Secrets of `namespace` whose controlling owner no longer exists; how
/// many it deleted. The Secrets are listed before the ConfigMaps: an owner uid that a later
/// list lacks was deleted (uids are never reused), so a Secret is never collected because its
/// owner was created after the list.
pub async fn collect(client: &kube::Client, namespace: &str) -> Result<usize, kube::Error> {
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

/// Collects every 200 ms until `stop`; how many Secrets it deleted and how many passes failed
/// (the server unreachable during a restart, for one).
pub async fn run(client: kube::Client, namespace: String, stop: CancellationToken) -> (u64, u64) {
    let (mut deleted, mut failed) = (0_u64, 0_u64);
    while !stop.is_cancelled() {
        match collect(&client, &namespace).await {
            Ok(n) => deleted += n as u64,
            Err(_) => failed += 1,
        }
        tokio::select! {
            () = stop.cancelled() => {}
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    (deleted, failed)
}
