//! A controller of a sharded manager: which of its kinds are sharded (its primary kind, assigned
//! by the ring; its owned kinds, following their owner), and the guard each reconcile passes
//! first, so a shard works only on the objects that are its own now.

use std::sync::Arc;

use informer::Object;
use kube::core::ApiResource;

use crate::cache::{CacheSpec, KindCache};
use crate::controller::error::Error;
use crate::manager::Manager;
use crate::sharding::{Admission, Error as ShardingError, ObjectLabels, Role, Shard, ShardedKind};

/// Marks `spec`'s kind as sharded in `role` before its cache is made; `None` when the manager
/// is not sharded. Fails once the manager has started: its sharder learned its kinds then.
pub(super) fn shard_kind<T: Object>(
    manager: &Manager,
    spec: &CacheSpec<T>,
    controller: &str,
    role: Role,
) -> Result<Option<ShardedKind>, Error> {
    if manager.sharded().is_none() {
        return Ok(None);
    }
    if manager.is_started() {
        return Err(Error::Manager(
            ShardingError::LateController {
                controller: controller.to_owned(),
            }
            .into(),
        ));
    }
    if !manager.cache().registry.shard_kind(&spec.key.kind) {
        tracing::warn!(
            kind = %spec.kind,
            "a cache of this sharded kind was made before its controller: it keeps every object (the reconcile guard still keeps the shard to its own)"
        );
    }
    Ok(Some(ShardedKind::new(
        ApiResource::erase::<T>(&spec.dyntype),
        spec.namespaced,
        role,
    )))
}

/// Hands `kind`, in the namespaces its cache holds, and the cache's object count to the sharded
/// manager; the kind in those namespaces.
pub(super) fn register_kind<T: Object>(
    manager: &Manager,
    kind: Option<ShardedKind>,
    cache: &Arc<KindCache<T>>,
) -> Option<ShardedKind> {
    let (sharded, kind) = (manager.sharded()?, kind?.in_namespaces(cache.namespaces()));
    let counted = Arc::clone(cache);
    sharded.add_kind(kind.clone(), Arc::new(move || counted.len()));
    Some(kind)
}

/// What the guard says of one reconcile.
pub(crate) enum Verdict {
    /// Reconcile.
    Work,
    /// Not this shard's to reconcile now: forget the key.
    Skip,
    /// The drain acknowledgement failed: retry with backoff.
    Retry,
}

/// Asked before each reconcile of a sharded controller.
pub(crate) struct ShardGuard {
    shard: Shard,
    resource: ApiResource,
}

impl ShardGuard {
    /// The guard of the primary kind `kind` for `manager`'s shard; `None` when not sharded.
    pub(super) fn new(manager: &Manager, kind: Option<&ShardedKind>) -> Option<Self> {
        Some(Self {
            shard: manager.shard()?.clone(),
            resource: kind?.resource.clone(),
        })
    }

    /// The verdict for an object `cached` now, or, gone from the cache, last seen as `deleted`.
    /// A watch shows an object that moved to another shard as deleted, in the last state this
    /// shard saw: so for an object that left the cache still labelled for this shard, the server
    /// tells whether it was deleted (reconcile the deletion) or moved (skip it). A key with
    /// neither an object nor a last state is skipped (nothing says it is this shard's).
    pub(crate) async fn judge<K: Object>(
        &self,
        cached: Option<Arc<K>>,
        deleted: Option<Arc<K>>,
    ) -> Verdict {
        let Some(object) = cached else {
            let Some(last) = deleted else {
                return Verdict::Skip;
            };
            let empty = Default::default();
            let labels = last.meta().labels.as_ref().unwrap_or(&empty);
            let labelled_mine = ObjectLabels::of(self.shard.ring(), labels).shard
                == Some(self.shard.name().as_str());
            if !labelled_mine || !self.shard.member().is_held() {
                return Verdict::Skip;
            }
            return match self.shard.still_mine(&self.resource, last.meta()).await {
                Ok(None | Some(true)) => Verdict::Work,
                Ok(Some(false)) => {
                    tracing::debug!("moved to another shard; skipped");
                    Verdict::Skip
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot tell a deletion from a move; retrying");
                    Verdict::Retry
                }
            };
        };
        match self
            .shard
            .admit_dynamic(&self.resource, object.meta())
            .await
        {
            Ok(Admission::Work) => Verdict::Work,
            Ok(admission) => {
                tracing::debug!(?admission, "not this shard's to reconcile now; skipped");
                Verdict::Skip
            }
            Err(error) => {
                tracing::warn!(%error, "cannot acknowledge a drain; retrying");
                Verdict::Retry
            }
        }
    }
}
