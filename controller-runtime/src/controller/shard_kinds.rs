//! How a controller hands its sharded kinds to a sharded manager (through [`Host::sharding`])
//! while it registers its watches: marked before their caches are made, registered with the
//! namespaces and object count of their cache once it is.

use std::sync::Arc;

use informer::Object;
use kube::core::ApiResource;

use crate::cache::{CacheSpec, KindCache};
use crate::controller::error::Error;
use crate::controller::host::Host;
use crate::controller::shard::{KindGuards, KindToShard, ShardRole};

/// Marks `spec`'s kind as sharded in `role` before its cache is made; `None` when the manager
/// is not sharded. Fails once the manager has started: its sharder learned its kinds then.
pub(super) fn shard_kind<T: Object>(
    host: &dyn Host,
    spec: &CacheSpec<T>,
    controller: &str,
    role: ShardRole,
) -> Result<Option<KindToShard>, Error> {
    if host.sharding().is_none() {
        return Ok(None);
    }
    if host.is_started() {
        return Err(Error::LateShardedController {
            controller: controller.to_owned(),
        });
    }
    if !host.cache().registry.shard_kind(&spec.key.kind) {
        tracing::warn!(
            kind = %spec.kind,
            "a cache of this sharded kind was made before its controller: it keeps every object (the reconcile guard still keeps the shard to its own)"
        );
    }
    Ok(Some(KindToShard {
        resource: ApiResource::erase::<T>(&spec.dyntype),
        namespaced: spec.namespaced,
        role,
    }))
}

/// Hands `kind`, in the namespaces its cache holds, and the cache's object count to the sharded
/// manager; the guards of the kind's reconciles and of its events.
pub(super) fn register_kind<T: Object>(
    host: &dyn Host,
    kind: Option<KindToShard>,
    cache: &Arc<KindCache<T>>,
) -> Option<KindGuards> {
    let (sharding, kind) = (host.sharding()?, kind?);
    let counted = Arc::clone(cache);
    let guards = KindGuards {
        reconcile: sharding.guard(&kind.resource),
        events: sharding.guard(&kind.resource).into(),
    };
    sharding.add_kind(kind, cache.namespaces(), Arc::new(move || counted.len()));
    Some(guards)
}
