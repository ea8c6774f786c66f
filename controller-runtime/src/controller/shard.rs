//! What a controller asks of a sharded manager, through a narrow interface the `sharding`
//! module implements: which of the controller's kinds are sharded (its primary kind, placed by
//! the ring; its owned kinds, following their owner), and the [`ShardGuard`] each reconcile
//! passes first, so a shard works only on the objects that are its own now. The controller
//! knows nothing else of sharding (`shard_kinds.rs` hands its kinds over).

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ApiResource;

/// How the objects of a sharded kind are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShardRole {
    /// By the ring, from the object's own identity (a controller's primary kind).
    Key,
    /// With its controller owner, an object of a [`ShardRole::Key`] kind.
    Owned,
}

/// One kind a controller shards, as the controller describes it to the sharded manager.
#[derive(Clone, Debug)]
pub(crate) struct KindToShard {
    /// Group, version, kind and plural.
    pub(crate) resource: ApiResource,
    /// Whether the objects live in namespaces.
    pub(crate) namespaced: bool,
    /// How the objects are placed.
    pub(crate) role: ShardRole,
}

/// Counts the objects of one kind in the shard's cache.
pub(crate) type ObjectCount = Arc<dyn Fn() -> usize + Send + Sync>;

/// What a sharded manager offers its controllers (implemented by the `sharding` module).
pub(crate) trait ShardHost: Send + Sync {
    /// A controller shards `kind` in `namespaces` (`None`: all); `objects` counts them in this
    /// shard's cache.
    fn add_kind(&self, kind: KindToShard, namespaces: Option<Vec<String>>, objects: ObjectCount);

    /// The guard of reconciles of the primary kind `resource`.
    fn guard(&self, resource: &ApiResource) -> Box<dyn ShardGuard>;
}

/// What the guard says of one reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Reconcile.
    Work,
    /// Not this shard's to reconcile now: forget the key.
    Skip,
    /// The guard could not tell (a failed request): retry with backoff.
    Retry,
}

/// Asked before each reconcile of a sharded controller.
#[async_trait]
pub(crate) trait ShardGuard: Send + Sync {
    /// The verdict for an object `cached` now or, gone from the cache, last seen as `deleted`.
    async fn judge(&self, cached: Option<&ObjectMeta>, deleted: Option<&ObjectMeta>) -> Verdict;

    /// Whether an object whose metadata is `meta` asks this shard to let go of it (the
    /// sharder's drain request). Only a reconcile acknowledges the request, so the update that
    /// makes it reaches the queue whatever the controller's predicates say: it changes labels
    /// only, which [`GenerationChanged`](crate::controller::predicate::GenerationChanged) and
    /// most other predicates drop, and the object would never move.
    fn asks_to_let_go(&self, meta: &ObjectMeta) -> bool;
}

/// The guards a sharded manager gives one primary kind: one for the workers, one for the event
/// handler.
pub(crate) struct KindGuards {
    /// Asked before each reconcile.
    pub(crate) reconcile: Box<dyn ShardGuard>,
    /// Asked by the primary watch's handlers (one per informer of the kind) which updates pass
    /// whatever the predicates say.
    pub(crate) events: Arc<dyn ShardGuard>,
}
