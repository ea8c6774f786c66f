//! One pass of the sharder over its caches: judge the shard Leases, take over silent shards,
//! delete orphaned Leases, then bring every object one step closer to where the ring wants it
//! ([`decide`]), writing only labels, each write conditional on the resourceVersion read.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use informer::{MetadataInformer, SharedIndexInformer};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::sharding::assignment::{Assignment, ObjectLabels, Placement, decide};
use crate::sharding::labels::{ASSIGNED_ANNOTATION, DRAIN_VALUE, drain_label, shard_label};
use crate::sharding::lease::ShardLease;
use crate::sharding::membership::membership;
use crate::sharding::ring::ShardName;
use crate::sharding::sharder::kinds::{Role, ShardedKind};
use crate::sharding::sharder::stats::SharderStats;
use crate::sharding::state::ShardState;
use crate::sharding::takeover::{Takeover, take_over_uncertain_shard};

/// A kind's metadata caches (one per namespace the ring places objects in, or one for all).
pub(crate) type KindCache = (ShardedKind, Vec<Arc<MetadataInformer<DynamicObject>>>);

/// Every object of a kind's caches.
fn objects(
    caches: &[Arc<MetadataInformer<DynamicObject>>],
) -> Vec<Arc<PartialObjectMeta<DynamicObject>>> {
    caches
        .iter()
        .flat_map(|cache| cache.indexer().list())
        .collect()
}

/// What a pass needs besides the caches.
pub(crate) struct PassContext<'a> {
    /// The client the sharder writes with.
    pub client: &'a kube::Client,
    /// The ring.
    pub ring: &'a str,
    /// The shard Leases' namespace.
    pub namespace: &'a str,
    /// The sharder's identity (holder of taken-over Leases).
    pub identity: &'a str,
    /// Where the pass counts what it did.
    pub stats: &'a SharderStats,
    /// Fires when leadership ends: the pass stops writing at once.
    pub stop: &'a CancellationToken,
    /// Whether objects leave live shards through the drain handshake (off only to show what
    /// it prevents).
    pub drain_handshake: bool,
}

/// Runs one pass; returns how long until the next one is due by the clock alone.
pub(crate) async fn run_pass(
    context: &PassContext<'_>,
    leases: &SharedIndexInformer<Lease>,
    kinds: &[KindCache],
) -> Option<Duration> {
    let now = Timestamp::now();
    let shard_leases: Vec<ShardLease> = leases
        .indexer()
        .list()
        .iter()
        .filter_map(|lease| ShardLease::from_lease(lease))
        .collect();
    let members = membership(context.ring, &shard_leases, now);
    let mut look_again_at_once = false;
    for shard in &members.uncertain {
        if context.stop.is_cancelled() {
            return None;
        }
        match take_over_uncertain_shard(
            context.client.clone(),
            context.namespace,
            shard,
            context.identity,
        )
        .await
        {
            Ok(Takeover::Acquired) => {
                tracing::info!(ring = context.ring, %shard, "shard silent for two Lease durations: taken over, its objects move");
                look_again_at_once = true;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(ring = context.ring, %shard, %error, "cannot take over a silent shard")
            }
        }
    }
    let lease_api: Api<Lease> = Api::namespaced(context.client.clone(), context.namespace);
    for shard in &members.orphaned {
        match lease_api
            .delete(shard.as_str(), &DeleteParams::default())
            .await
        {
            Ok(_) => {
                tracing::info!(ring = context.ring, %shard, "deleted the Lease of a shard long dead")
            }
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(error) => {
                tracing::warn!(ring = context.ring, %shard, %error, "cannot delete an orphaned shard Lease")
            }
        }
    }
    context.stats.set_ring_size(members.ring.len());
    if look_again_at_once {
        return Some(Duration::ZERO);
    }

    // Owners' shards, by kind index and namespace/name, as the caches show them now.
    let mut owner_shards: HashMap<(usize, String, String), Option<String>> = HashMap::new();
    let shard_key = shard_label(context.ring);
    for (index, (kind, cache)) in kinds.iter().enumerate() {
        if kind.role != Role::Key {
            continue;
        }
        for object in objects(cache) {
            let meta = &object.metadata;
            let shard = meta
                .labels
                .as_ref()
                .and_then(|labels| labels.get(&shard_key))
                .cloned();
            owner_shards.insert(
                (
                    index,
                    meta.namespace.clone().unwrap_or_default(),
                    meta.name.clone().unwrap_or_default(),
                ),
                shard,
            );
        }
    }

    let empty = Default::default();
    // Shards some object of the ring is still on its way to (a drain pending).
    let mut awaited: HashSet<ShardName> = HashSet::new();
    for (kind, cache) in kinds {
        for object in objects(cache) {
            if context.stop.is_cancelled() {
                return None;
            }
            let meta = &object.metadata;
            let labels = ObjectLabels::of(context.ring, meta.labels.as_ref().unwrap_or(&empty));
            let key;
            let placement = match kind.role {
                Role::Key => {
                    key = kind.key_of(meta);
                    Placement::Key(&key)
                }
                Role::Owned => match owner_shard(meta, kinds, &owner_shards) {
                    Some(shard) => Placement::Owner(shard),
                    // Not owned by an object of the ring: not the ring's to place.
                    None => continue,
                },
            };
            let mut step = decide(&members.ring, placement, labels);
            if let (
                Assignment::Drain { from } | Assignment::AwaitDrain { from },
                Placement::Key(key),
            ) = (&step, placement)
                && let Some(to) = members.ring.assign(key)
            {
                if context.drain_handshake {
                    awaited.insert(to.clone());
                } else {
                    step = Assignment::Reassign {
                        from: from.clone(),
                        to: to.clone(),
                    };
                }
            }
            apply(context, kind, &object, step).await;
        }
    }
    for lease in &shard_leases {
        let ready = lease.ring() == Some(context.ring)
            && lease.held_by_shard()
            && lease.state(now) == ShardState::Ready;
        if ready && !lease.is_assigned() && !awaited.contains(lease.shard()) {
            mark_assigned(context, lease).await;
        }
    }
    members.next_change
}

/// Marks `lease`'s current holding as given its share of the ring (the shard's readiness waits
/// for it). Conditional on nothing: the annotation is the sharder's alone, and the shard's next
/// renewal reads the Lease afresh.
async fn mark_assigned(context: &PassContext<'_>, lease: &ShardLease) {
    let Some(acquired) = lease.acquired() else {
        return;
    };
    let api: Api<Lease> = Api::namespaced(context.client.clone(), context.namespace);
    let patch = json!({ "metadata": { "annotations": { ASSIGNED_ANNOTATION: acquired } } });
    match api
        .patch(
            lease.shard().as_str(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => {
            tracing::info!(ring = context.ring, shard = %lease.shard(), "shard has its share of the ring")
        }
        Err(error) => {
            tracing::warn!(ring = context.ring, shard = %lease.shard(), %error, "cannot mark a shard assigned; the next pass tries again")
        }
    }
}

/// The shard label of `meta`'s controller owner when that owner is of one of the ring's kinds
/// (`Some(None)`: such an owner without a shard yet); `None` when no such owner.
fn owner_shard<'a>(
    meta: &ObjectMeta,
    kinds: &[KindCache],
    owner_shards: &'a HashMap<(usize, String, String), Option<String>>,
) -> Option<Option<&'a str>> {
    let owner = meta
        .owner_references
        .as_ref()?
        .iter()
        .find(|owner| owner.controller == Some(true))?;
    let index = kinds
        .iter()
        .position(|(kind, _)| kind.role == Role::Key && kind.is(&owner.api_version, &owner.kind))?;
    let namespace = meta.namespace.clone().unwrap_or_default();
    Some(
        owner_shards
            .get(&(index, namespace, owner.name.clone()))
            .and_then(|shard| shard.as_deref()),
    )
}

/// The merge patch of an assignment step (`None`: nothing to write). It carries the
/// resourceVersion read, so it fails with a conflict if the object changed meanwhile (a shard
/// acknowledging a drain, another sharder) and the next pass decides again.
pub(crate) fn label_patch(ring: &str, step: &Assignment, resource_version: &str) -> Option<Value> {
    let (shard, drain) = (shard_label(ring), drain_label(ring));
    let labels = match step {
        Assignment::Assign { to } | Assignment::Reassign { to, .. } => {
            json!({ shard: to.as_str(), drain: null })
        }
        Assignment::Drain { .. } => json!({ drain: DRAIN_VALUE }),
        _ => return None,
    };
    Some(json!({ "metadata": { "resourceVersion": resource_version, "labels": labels } }))
}

/// Writes `step` for `object`, counting it once written.
async fn apply(
    context: &PassContext<'_>,
    kind: &ShardedKind,
    object: &PartialObjectMeta<DynamicObject>,
    step: Assignment,
) {
    let meta = &object.metadata;
    let (Some(name), Some(version)) = (meta.name.as_deref(), meta.resource_version.as_deref())
    else {
        return;
    };
    let Some(patch) = label_patch(context.ring, &step, version) else {
        return;
    };
    let api: Api<DynamicObject> = match (&meta.namespace, kind.namespaced) {
        (Some(namespace), true) => {
            Api::namespaced_with(context.client.clone(), namespace, &kind.resource)
        }
        _ => Api::all_with(context.client.clone(), &kind.resource),
    };
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {
            tracing::debug!(ring = context.ring, kind = %kind.resource.kind, namespace = ?meta.namespace, name, ?step, "sharding step written");
            context.stats.record(&step);
        }
        // Changed or gone since the cache saw it: the next pass decides again.
        Err(kube::Error::Api(status)) if status.code == 409 || status.code == 404 => {}
        Err(error) => {
            context.stats.record_failure();
            tracing::warn!(ring = context.ring, kind = %kind.resource.kind, namespace = ?meta.namespace, name, %error, "cannot write a sharding label");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_set_or_drop_labels_on_the_version_read() {
        let to = ShardName::new("b");
        let from = ShardName::new("a");
        assert_eq!(
            label_patch("web", &Assignment::Assign { to: to.clone() }, "7"),
            Some(json!({"metadata": {"resourceVersion": "7", "labels": {
                "shard.sharding.kube-rt.dev/web": "b",
                "drain.sharding.kube-rt.dev/web": null,
            }}}))
        );
        assert_eq!(
            label_patch(
                "web",
                &Assignment::Reassign {
                    from: from.clone(),
                    to
                },
                "8"
            ),
            label_patch(
                "web",
                &Assignment::Assign {
                    to: ShardName::new("b")
                },
                "8"
            ),
        );
        assert_eq!(
            label_patch("web", &Assignment::Drain { from: from.clone() }, "9"),
            Some(json!({"metadata": {"resourceVersion": "9", "labels": {
                "drain.sharding.kube-rt.dev/web": "true",
            }}}))
        );
        assert_eq!(label_patch("web", &Assignment::Keep, "9"), None);
        assert_eq!(
            label_patch("web", &Assignment::AwaitDrain { from }, "9"),
            None
        );
    }
}
