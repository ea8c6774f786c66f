//! [`ShardingSeries`]: what a sharded manager shows on `/metrics` about its shard and its ring,
//! read at scrape time: the objects in its caches per kind, the drains it acknowledged, whether
//! it holds its Lease and has its share, and — while its candidate leads the ring's sharder —
//! the ring's size and the sharder's writes.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::sharding::shard::Shard;
use crate::sharding::sharder::{SharderCounts, SharderStats};

pub(crate) use crate::controller::ObjectCount;

/// The sources of a sharded manager's series.
pub struct ShardingSeries {
    shard: Shard,
    sharder: Arc<SharderStats>,
    objects: Mutex<Vec<(String, ObjectCount)>>,
}

impl std::fmt::Debug for ShardingSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardingSeries")
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

/// One scrape's values of a [`ShardingSeries`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardingSample {
    /// The ring.
    pub ring: String,
    /// This replica's shard.
    pub shard: String,
    /// Objects in the shard's caches, by kind.
    pub objects: Vec<(String, usize)>,
    /// Drains the shard acknowledged.
    pub drains_acknowledged: u64,
    /// Whether the shard holds its Lease.
    pub lease_held: bool,
    /// Whether the sharder gave the shard's current holding its share.
    pub assigned: bool,
    /// The ring's sharder's counts, as this replica's candidate counted them (zero unless it
    /// led at some point).
    pub sharder: SharderCounts,
    /// Whether this replica's candidate leads the ring's sharder now.
    pub sharder_leading: bool,
}

impl ShardingSeries {
    pub(crate) fn new(shard: Shard, sharder: Arc<SharderStats>) -> Self {
        Self {
            shard,
            sharder,
            objects: Mutex::new(Vec::new()),
        }
    }

    /// Counts `kind`'s objects with `count` (one counter per kind: the first given stays).
    pub(crate) fn count_objects(&self, kind: &str, count: ObjectCount) {
        let mut objects = self.objects.lock();
        if !objects.iter().any(|(known, _)| known == kind) {
            objects.push((kind.to_owned(), count));
        }
    }

    /// The values now.
    pub fn sample(&self) -> ShardingSample {
        let member = self.shard.member();
        ShardingSample {
            ring: self.shard.ring().to_owned(),
            shard: self.shard.name().to_string(),
            objects: self
                .objects
                .lock()
                .iter()
                .map(|(kind, count)| (kind.clone(), count()))
                .collect(),
            drains_acknowledged: self.shard.drains_acknowledged(),
            lease_held: member.is_held(),
            assigned: member.is_assigned(),
            sharder: self.sharder.counts(),
            sharder_leading: self.sharder.is_leading(),
        }
    }
}
