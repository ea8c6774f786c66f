//! The assignment webhook: a mutating admission webhook that labels a new object of a ring's
//! kinds with its shard as it is created, so its shard starts on it at once instead of after the
//! sharder's next pass (which stays the fallback: it labels whatever the webhook did not).
//!
//! It answers `CREATE`s only and never refuses: an object it cannot place (the ring's Leases not
//! cached yet, an empty ring, an owner it cannot read) is admitted unlabelled.

use std::sync::Arc;
use std::time::Duration;

use informer::SharedIndexInformer;
use json_patch::{AddOperation, Patch, PatchOperation};
use k8s_openapi::api::admissionregistration::v1::RuleWithOperations;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::core::admission::Operation;
use parking_lot::Mutex;
use serde_json::Value;

use crate::sharding::assignment::ObjectLabels;
use crate::sharding::labels::shard_label;
use crate::sharding::lease::ShardLease;
use crate::sharding::membership::membership;
use crate::sharding::ring::{Ring, ring_key};
use crate::sharding::sharder::{Role, ShardedKind};
use crate::webhook::{AdmissionHandler, AdmissionRequest, AdmissionResponse, Webhook};

/// How long the webhook waits to read an owned object's owner.
const OWNER_READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Labels new objects of a ring's kinds with their shard.
pub(crate) struct AssignmentHook {
    ring: String,
    client: kube::Client,
    /// The ring's shard Leases, cached by the manager's informers.
    leases: Arc<SharedIndexInformer<Lease>>,
    /// The kinds the ring's controllers shard.
    kinds: Arc<Mutex<Vec<ShardedKind>>>,
}

impl AssignmentHook {
    pub(crate) fn new(
        ring: String,
        client: kube::Client,
        leases: Arc<SharedIndexInformer<Lease>>,
        kinds: Arc<Mutex<Vec<ShardedKind>>>,
    ) -> Self {
        Self {
            ring,
            client,
            leases,
            kinds,
        }
    }

    /// The ring of the live shards, once the Leases are cached.
    fn ring_now(&self) -> Option<Ring> {
        if !self.leases.has_synced() {
            return None;
        }
        let leases: Vec<ShardLease> = self
            .leases
            .indexer()
            .list()
            .iter()
            .filter_map(|lease| ShardLease::from_lease(lease))
            .collect();
        Some(membership(&self.ring, &leases, Timestamp::now()).ring)
    }

    /// The shard for the object of `request`, if it can be placed now.
    async fn place(&self, request: &AdmissionRequest, object: &DynamicObject) -> Option<String> {
        let (group, kind) = (&request.kind.group, &request.kind.kind);
        let namespace = request.namespace.as_deref();
        let role = self
            .kinds
            .lock()
            .iter()
            .find(|known| &known.resource.group == group && &known.resource.kind == kind)
            .filter(|known| known.covers(namespace))
            .map(|known| known.role)?;
        let ring = self.ring_now()?;
        let namespace = request.namespace.as_deref().unwrap_or_default();
        match role {
            Role::Key => {
                let name = object
                    .metadata
                    .name
                    .as_deref()
                    .filter(|name| !name.is_empty())?;
                ring.assign(&ring_key(group, kind, namespace, name))
                    .map(|shard| shard.to_string())
            }
            Role::Owned => {
                let shard = self.owner_shard(object, namespace).await?;
                ring.contains(&shard).then_some(shard)
            }
        }
    }

    /// The shard label of `object`'s controller owner, when the owner is of one of the ring's
    /// own kinds and can be read now.
    async fn owner_shard(&self, object: &DynamicObject, namespace: &str) -> Option<String> {
        let owner = object
            .metadata
            .owner_references
            .as_ref()?
            .iter()
            .find(|owner| owner.controller == Some(true))?;
        let kind = self
            .kinds
            .lock()
            .iter()
            .find(|known| known.role == Role::Key && known.is(&owner.api_version, &owner.kind))
            .cloned()?;
        let api: Api<DynamicObject> = if kind.namespaced {
            Api::namespaced_with(self.client.clone(), namespace, &kind.resource)
        } else {
            Api::all_with(self.client.clone(), &kind.resource)
        };
        let read = tokio::time::timeout(OWNER_READ_TIMEOUT, api.get_metadata_opt(&owner.name));
        let meta = read.await.ok()?.ok()??.metadata;
        let labels = meta.labels?;
        ObjectLabels::of(&self.ring, &labels)
            .shard
            .map(str::to_owned)
    }
}

impl AdmissionHandler for AssignmentHook {
    async fn handle(&self, request: AdmissionRequest) -> AdmissionResponse {
        let response = AdmissionResponse::from(&request);
        if request.operation != Operation::Create {
            return response;
        }
        let Some(object) = request.object.as_ref() else {
            return response;
        };
        let empty = Default::default();
        let labels = object.metadata.labels.as_ref().unwrap_or(&empty);
        if ObjectLabels::of(&self.ring, labels).shard.is_some() {
            return response;
        }
        let Some(shard) = self.place(&request, object).await else {
            return response;
        };
        let patch = label_patch(&self.ring, &shard, object.metadata.labels.is_some());
        match response.clone().with_patch(patch) {
            Ok(patched) => {
                tracing::debug!(ring = %self.ring, %shard, kind = %request.kind.kind, name = %request.name, "assigned at creation");
                patched
            }
            Err(error) => {
                tracing::warn!(ring = %self.ring, %error, "cannot encode the assignment patch; the sharder assigns the object");
                response
            }
        }
    }
}

/// The JSON patch that sets `ring`'s shard label to `shard` (creating the labels map when the
/// object has none).
fn label_patch(ring: &str, shard: &str, has_labels: bool) -> Patch {
    let key = shard_label(ring);
    let operation = if has_labels {
        AddOperation {
            path: json_patch::jsonptr::PointerBuf::from_tokens([
                "metadata",
                "labels",
                key.as_str(),
            ]),
            value: Value::String(shard.to_owned()),
        }
    } else {
        AddOperation {
            path: json_patch::jsonptr::PointerBuf::from_tokens(["metadata", "labels"]),
            value: serde_json::json!({ key: shard }),
        }
    };
    Patch(vec![PatchOperation::Add(operation)])
}

/// The webhook of `hook` on `path`, its configuration sending `CREATE`s of `kinds`; it fails
/// open (the sharder assigns what it missed).
pub(crate) fn assignment_webhook(
    path: &str,
    hook: AssignmentHook,
    kinds: &[ShardedKind],
) -> Webhook {
    let rules = kinds
        .iter()
        .map(|kind| RuleWithOperations {
            api_groups: Some(vec![kind.resource.group.clone()]),
            api_versions: Some(vec![kind.resource.version.clone()]),
            operations: Some(vec!["CREATE".to_owned()]),
            resources: Some(vec![kind.resource.plural.clone()]),
            scope: Some(
                if kind.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .to_owned(),
            ),
        })
        .collect();
    Webhook::raw(path, hook)
        .mutating(true)
        .rules(rules)
        .failure_policy(crate::webhook::FailurePolicy::Ignore)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_adds_the_label_or_the_labels() {
        let mut with = serde_json::json!({"metadata": {"labels": {"app": "x"}}});
        json_patch::patch(&mut with, &label_patch("web", "s1", true)).unwrap();
        assert_eq!(
            with["metadata"]["labels"],
            serde_json::json!({"app": "x", "shard.sharding.kube-rt.dev/web": "s1"})
        );
        let mut without = serde_json::json!({"metadata": {"name": "a"}});
        json_patch::patch(&mut without, &label_patch("web", "s1", false)).unwrap();
        assert_eq!(
            without["metadata"]["labels"],
            serde_json::json!({"shard.sharding.kube-rt.dev/web": "s1"})
        );
    }
}
