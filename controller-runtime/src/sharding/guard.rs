//! [`ReconcileGuard`]: the [`ShardGuard`] a sharded manager gives each controller's reconciles
//! of its primary kind, so a shard works only on the objects that are its own now.

use async_trait::async_trait;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ApiResource;

use crate::controller::{ShardGuard, Verdict};
use crate::sharding::assignment::{ObjectLabels, ShardAction, shard_action};
use crate::sharding::shard::{Admission, Shard};

/// Asked before each reconcile of one primary kind of a sharded controller.
pub(crate) struct ReconcileGuard {
    shard: Shard,
    resource: ApiResource,
}

impl ReconcileGuard {
    /// The guard of the primary kind `resource` for `shard`.
    pub(crate) fn new(shard: Shard, resource: ApiResource) -> Self {
        Self { shard, resource }
    }
}

#[async_trait]
impl ShardGuard for ReconcileGuard {
    /// A watch shows an object that moved to another shard as deleted, in the last state this
    /// shard saw: so for an object that left the cache still labelled for this shard, the server
    /// tells whether it was deleted (reconcile the deletion) or moved (skip it). A key with
    /// neither an object nor a last state is skipped (nothing says it is this shard's).
    async fn judge(&self, cached: Option<&ObjectMeta>, deleted: Option<&ObjectMeta>) -> Verdict {
        let Some(meta) = cached else {
            let Some(last) = deleted else {
                return Verdict::Skip;
            };
            let empty = Default::default();
            let labels = last.labels.as_ref().unwrap_or(&empty);
            let labelled_mine = ObjectLabels::of(self.shard.ring(), labels).shard
                == Some(self.shard.name().as_str());
            if !labelled_mine || !self.shard.member().is_held() {
                return Verdict::Skip;
            }
            return match self.shard.still_mine(&self.resource, last).await {
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
        match self.shard.admit_dynamic(&self.resource, meta).await {
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

    fn asks_to_let_go(&self, meta: &ObjectMeta) -> bool {
        let empty = Default::default();
        let labels = ObjectLabels::of(self.shard.ring(), meta.labels.as_ref().unwrap_or(&empty));
        shard_action(self.shard.name(), labels) == ShardAction::AcknowledgeDrain
    }
}
