//! What a shard process reports to the measuring process: a JSON file it rewrites a few times a
//! second (through a rename, so a reader never sees half of it), holding its readiness, its cache
//! and every reconcile it ran, grouped by the round its object was touched in.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The annotation the measuring process sets on every object to start a round; its value is the
/// round number. Objects without it are in round 0 (their first reconcile after creation).
pub const ROUND_ANNOTATION: &str = "bench.kube-rt.dev/round";

/// One shard process's report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShardStatus {
    /// The shard's name.
    pub shard: String,
    /// The shard holds its Lease and the ring's sharder has given it its share.
    pub ready: bool,
    /// This process's candidate leads the ring's sharder now.
    pub leads_sharder: bool,
    /// Objects in the controller's (label-selected) ConfigMap cache.
    pub cache_objects: usize,
    /// Reconciles running now.
    pub in_flight: u64,
    /// Wall-clock microseconds when the latest reconcile started (0: none yet).
    pub last_start_us: i64,
    /// Reconciles by the round of the object they saw.
    pub rounds: BTreeMap<u32, RoundStatus>,
}

/// The reconciles of one round in one shard process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundStatus {
    /// The objects reconciled in this round (names, sorted, each once).
    pub names: Vec<String>,
    /// Reconciles in this round (more than `names` if an object was reconciled twice).
    pub reconciles: u64,
    /// Wall-clock microseconds when the round's first reconcile started.
    pub first_start_us: i64,
    /// Wall-clock microseconds when the round's last reconcile so far ended.
    pub last_end_us: i64,
}

/// Wall-clock microseconds since the Unix epoch: comparable across the processes of one machine.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
        })
}

impl ShardStatus {
    /// Writes the report to `path` through a rename.
    pub fn write(&self, path: &Path) -> Result<()> {
        let partial = path.with_extension("partial");
        std::fs::write(&partial, serde_json::to_vec(self)?)
            .with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, path).with_context(|| format!("renaming to {}", path.display()))
    }

    /// The report at `path`; `None` before the process wrote its first.
    pub fn read(path: &Path) -> Result<Option<Self>> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(
                serde_json::from_slice(&bytes)
                    .with_context(|| format!("decoding {}", path.display()))?,
            )),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// This round's reconciles (empty if none yet).
    pub fn round(&self, round: u32) -> RoundStatus {
        self.rounds.get(&round).cloned().unwrap_or_default()
    }
}
