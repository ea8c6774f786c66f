//! The series of a sharded manager, read from its [`ShardingSeries`] at scrape time:
//! `kube_rt_shard_objects{ring,shard,kind}`, `kube_rt_shard_drains_acknowledged_total`,
//! `kube_rt_shard_lease_held`, `kube_rt_shard_assigned` (labels `ring`, `shard`), and the ring's
//! sharder as this replica's candidate counted it: `kube_rt_sharder_leading`,
//! `kube_rt_sharder_ring_size`, `kube_rt_sharder_assignments_total`,
//! `kube_rt_sharder_drains_total`, `kube_rt_sharder_reassignments_total` (labels `ring`,
//! `shard`).

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;

use crate::ops::metrics::{Metrics, counter, gauge, labels};
use crate::sharding::ShardingSeries;

/// Serves a sharded manager's series in `metrics`, read from `series` at scrape time.
pub(crate) fn register(metrics: &Metrics, series: Arc<ShardingSeries>) {
    metrics
        .with_registry(|registry| registry.register_collector(Box::new(ShardingCollector(series))));
}

/// Reads a sharded manager's series at scrape time.
struct ShardingCollector(Arc<ShardingSeries>);

impl std::fmt::Debug for ShardingCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ShardingCollector").finish()
    }
}

impl Collector for ShardingCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let sample = self.0.sample();
        let shard = labels(&[("ring", &sample.ring), ("shard", &sample.shard)]);
        let objects: Vec<_> = sample
            .objects
            .iter()
            .map(|(kind, count)| {
                let series = labels(&[
                    ("ring", &sample.ring),
                    ("shard", &sample.shard),
                    ("kind", kind),
                ]);
                (series, i64::try_from(*count).unwrap_or(i64::MAX))
            })
            .collect();
        gauge(
            &mut encoder,
            "kube_rt_shard_objects",
            "Objects of each sharded kind assigned to this shard, in its cache",
            &objects,
        )?;
        counter(
            &mut encoder,
            "kube_rt_shard_drains_acknowledged",
            "Objects this shard let go of at the sharder's request",
            &[(shard.clone(), sample.drains_acknowledged)],
        )?;
        for (name, help, value) in [
            (
                "kube_rt_shard_lease_held",
                "Whether this shard holds its shard Lease",
                sample.lease_held,
            ),
            (
                "kube_rt_shard_assigned",
                "Whether the ring's sharder has given this shard its share",
                sample.assigned,
            ),
            (
                "kube_rt_sharder_leading",
                "Whether this replica's candidate leads the ring's sharder",
                sample.sharder_leading,
            ),
        ] {
            gauge(
                &mut encoder,
                name,
                help,
                &[(shard.clone(), i64::from(value))],
            )?;
        }
        let counts = sample.sharder;
        gauge(
            &mut encoder,
            "kube_rt_sharder_ring_size",
            "Shards on the ring at the sharder's last pass in this replica",
            &[(
                shard.clone(),
                i64::try_from(counts.ring_size).unwrap_or(i64::MAX),
            )],
        )?;
        for (name, help, value) in [
            (
                "kube_rt_sharder_assignments",
                "Objects the sharder in this replica gave a shard",
                counts.assigned,
            ),
            (
                "kube_rt_sharder_drains",
                "Objects the sharder in this replica asked their live shard to let go of",
                counts.drains,
            ),
            (
                "kube_rt_sharder_reassignments",
                "Objects the sharder in this replica moved at once (off a dead shard, or following their owner)",
                counts.reassigned,
            ),
        ] {
            counter(&mut encoder, name, help, &[(shard.clone(), value)])?;
        }
        Ok(())
    }
}
