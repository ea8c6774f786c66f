//! A drain reaches a sharded controller whatever its predicates drop: the sharder asks a shard
//! to let go of an object by labelling it, an update that leaves the generation alone (and
//! ConfigMaps have none), so `GenerationChanged` drops it; only a reconcile acknowledges the
//! drain, and without one the object would never move to the shard that joined. With the
//! shards' caches typed and compact.

use controller_runtime::cache::Storage;
use controller_runtime::controller::Watch;
use controller_runtime::controller::predicate::GenerationChanged;
use k8s_openapi::api::core::v1::ConfigMap;

use super::{Replica, seed, settled, start_watching, total};
use crate::common::TestCluster;

#[tokio::test]
async fn a_drain_reaches_a_shard_whose_predicate_drops_label_changes() {
    drains_pass_the_predicate(Storage::typed()).await;
}

/// The same with the shards' ConfigMaps kept compact (the drain request is read from the lean
/// metadata, the predicate from the decoded objects).
#[tokio::test]
async fn a_drain_reaches_a_compact_shard_whose_predicate_drops_label_changes() {
    drains_pass_the_predicate(Storage::compact()).await;
}

async fn drains_pass_the_predicate(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    seed(&server.client().unwrap()).await;
    let generation_only = || {
        Watch::of::<ConfigMap>()
            .predicate(GenerationChanged)
            .storage(storage.clone())
    };

    let s0 = start_watching(&server, "s0", generation_only()).await;
    settled(&server, &[("s0", &s0)]).await;
    let s1 = start_watching(&server, "s1", generation_only()).await;
    settled(&server, &[("s0", &s0), ("s1", &s1)]).await;
    let both = [&s0, &s1];
    assert!(
        total(&both, |r| r.sharder().drains) > 0,
        "the joining shard got its share by drains"
    );
    assert_eq!(
        total(&both, Replica::drains_acknowledged),
        total(&both, |r| r.sharder().drains),
        "every drain was acknowledged by its shard"
    );

    for replica in [s0, s1] {
        replica.stop().await;
    }
    server.shutdown().await;
}
