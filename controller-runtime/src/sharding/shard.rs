//! [`Shard`]: the shard's side of the protocol, asked before each reconcile: is this object
//! mine to work on now? It answers from the object's labels and the shard's Lease, and performs
//! the drain acknowledgement itself: seeing the drain label on one of its objects, it removes
//! both labels in one write (conditional on the resourceVersion it saw) and stops working on it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::ApiResource;
use kube::{Client, Resource};
use serde_json::json;

use crate::sharding::assignment::{ObjectLabels, ShardAction, shard_action};
use crate::sharding::error::Error;
use crate::sharding::labels::{drain_label, shard_label};
use crate::sharding::member::ShardMember;
use crate::sharding::ring::ShardName;

/// Whether a shard works on an object now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Reconcile it.
    Work,
    /// The sharder asked this shard to let go; the acknowledgement is written: skip it (it is
    /// about to leave the shard's caches).
    Drained,
    /// Not this shard's object (or no longer: the labels moved on): skip it.
    NotMine,
    /// This shard does not hold its Lease now: skip it and let the sharder decide.
    LeaseNotHeld,
}

/// A replica's shard, as its reconcilers see it. Cheap to clone.
#[derive(Clone)]
pub struct Shard {
    client: Client,
    member: ShardMember,
    drains: Arc<AtomicU64>,
}

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("ring", &self.ring())
            .field("shard", self.name())
            .finish_non_exhaustive()
    }
}

impl Shard {
    /// The shard held by `member`; acknowledgements are written through `client`.
    pub fn new(client: Client, member: ShardMember) -> Self {
        Self {
            client,
            member,
            drains: Arc::default(),
        }
    }

    /// The client its acknowledgements are written with.
    #[cfg(feature = "webhook")]
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The member holding this shard's Lease.
    pub fn member(&self) -> &ShardMember {
        &self.member
    }

    /// How many drains this shard has acknowledged (objects it let go of at the sharder's
    /// request), through any clone of it.
    pub fn drains_acknowledged(&self) -> u64 {
        self.drains.load(Ordering::Relaxed)
    }

    /// The ring.
    pub fn ring(&self) -> &str {
        self.member.ring()
    }

    /// This shard's name.
    pub fn name(&self) -> &ShardName {
        self.member.shard()
    }

    /// Whether this shard may work on `object` now; acknowledges a drain when asked to.
    pub async fn admit<K>(&self, object: &K) -> Result<Admission, Error>
    where
        K: Resource<DynamicType = ()>,
    {
        self.admit_dynamic(&ApiResource::erase::<K>(&()), object.meta())
            .await
    }

    /// [`admit`](Self::admit) for an object of a kind known at run time, from its metadata.
    pub async fn admit_dynamic(
        &self,
        resource: &ApiResource,
        meta: &ObjectMeta,
    ) -> Result<Admission, Error> {
        if !self.member.is_held() {
            return Ok(Admission::LeaseNotHeld);
        }
        let empty = Default::default();
        let labels = ObjectLabels::of(self.ring(), meta.labels.as_ref().unwrap_or(&empty));
        match shard_action(self.name(), labels) {
            ShardAction::Reconcile => Ok(Admission::Work),
            ShardAction::AcknowledgeDrain => {
                self.acknowledge_drain(resource, meta).await?;
                Ok(Admission::Drained)
            }
            _ => Ok(Admission::NotMine),
        }
    }

    /// Whether the object `meta` names, gone from this shard's cache, was deleted (`Ok(None)`) or
    /// still exists, and then whether it is still this shard's (`Ok(Some(mine))`): a watch
    /// shows an object that left the shard's label selector as deleted, in the last state the
    /// shard saw (still labelled for it), so only the server can tell a move from a deletion.
    pub(crate) async fn still_mine(
        &self,
        resource: &ApiResource,
        meta: &ObjectMeta,
    ) -> Result<Option<bool>, kube::Error> {
        let name = meta.name.as_deref().unwrap_or_default();
        let current = self.api(resource, meta).get_metadata_opt(name).await?;
        Ok(current.map(|object| {
            let empty = Default::default();
            let labels = object.metadata.labels.as_ref().unwrap_or(&empty);
            shard_action(self.name(), ObjectLabels::of(self.ring(), labels)) != ShardAction::Ignore
        }))
    }

    /// The API of the object `meta` names, of kind `resource`.
    fn api(&self, resource: &ApiResource, meta: &ObjectMeta) -> Api<DynamicObject> {
        match meta.namespace.as_deref() {
            Some(namespace) => Api::namespaced_with(self.client.clone(), namespace, resource),
            None => Api::all_with(self.client.clone(), resource),
        }
    }

    /// Removes the shard and drain labels of the object, if it is still at the version seen.
    async fn acknowledge_drain(
        &self,
        resource: &ApiResource,
        meta: &ObjectMeta,
    ) -> Result<(), Error> {
        let name = meta.name.as_deref().unwrap_or_default();
        let api = self.api(resource, meta);
        let patch = json!({ "metadata": {
            "resourceVersion": meta.resource_version,
            "labels": { shard_label(self.ring()): null, drain_label(self.ring()): null },
        }});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                self.drains.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(ring = self.ring(), shard = %self.name(), kind = %resource.kind, namespace = ?meta.namespace, name, "drain acknowledged");
                Ok(())
            }
            // Changed since (the next event brings it back) or gone: nothing to let go of.
            Err(kube::Error::Api(status)) if status.code == 409 || status.code == 404 => Ok(()),
            Err(source) => Err(Error::Acknowledge {
                kind: resource.kind.clone(),
                namespace: meta.namespace.clone().unwrap_or_default(),
                name: name.to_owned(),
                source: Box::new(source),
            }),
        }
    }
}
