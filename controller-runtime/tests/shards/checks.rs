//! The soak's invariants over the members' journals, the parent's observations and the
//! server's final state.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use controller_runtime::sharding::{ObjectLabels, Ring, ShardName, ring_key};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;

use crate::member::{RING, shard_of};
use crate::members::journal::Interval;
use crate::observe::{Change, Labels, Move};

/// No object reconciled by two processes in overlapping time: for every key, no two
/// reconciles of different processes (incarnations included) overlap. A reconcile cut short by
/// a kill ends at the kill.
pub fn overlaps(intervals: &[Interval]) -> Vec<String> {
    let mut by_key: HashMap<&str, Vec<&Interval>> = HashMap::new();
    for r in intervals {
        by_key.entry(r.key.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (key, mut reconciles) in by_key {
        reconciles.sort_by_key(|r| r.start_us);
        for (i, later) in reconciles.iter().enumerate() {
            for earlier in &reconciles[..i] {
                if earlier.member != later.member && later.start_us < earlier.end_us {
                    out.push(format!(
                        "{key}: {} started at {} µs while {} reconciled it ({}..{} µs{})",
                        later.member,
                        later.start_us,
                        earlier.member,
                        earlier.start_us,
                        earlier.end_us,
                        if earlier.killed { ", killed" } else { "" },
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

/// Every reconcile worked on a version labelled with its own shard, where the parent's watch
/// delivered that version: how many were checked, and the ones that were not.
pub fn foreign_versions(intervals: &[Interval], labels: &Labels) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut out = Vec::new();
    for r in intervals {
        let Some(rv) = &r.seen_rv else { continue };
        let Some(shard) = labels.shard_at(&r.key, rv) else {
            continue;
        };
        checked += 1;
        if shard.as_deref() != Some(shard_of(&r.member)) {
            out.push(format!(
                "{} reconciled {} at {rv}, labelled {shard:?}",
                r.member, r.key
            ));
        }
    }
    (checked, out)
}

/// The moves attributed to one membership change (those observed after it and before the
/// next), against the bound 1.5 × objects ÷ shards (the larger ring of the two).
#[derive(Debug, Clone)]
pub struct ChangeMoves {
    pub change: Change,
    pub moves: usize,
    pub bound: f64,
}

impl std::fmt::Display for ChangeMoves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(",");
        write!(
            f,
            "[{}]→[{}] {} moves (bound {:.0})",
            names(&self.change.before),
            names(&self.change.after),
            self.moves,
            self.bound
        )
    }
}

/// The moves per membership change.
pub fn moves_per_change(changes: &[Change], moves: &[Move]) -> Vec<ChangeMoves> {
    changes
        .iter()
        .enumerate()
        .map(|(i, change)| {
            let until = changes.get(i + 1).map_or(i64::MAX, |next| next.at_us);
            let count = moves
                .iter()
                .filter(|m| change.at_us <= m.at_us && m.at_us < until)
                .count();
            let shards = change.before.len().max(change.after.len()).max(1);
            ChangeMoves {
                change: change.clone(),
                moves: count,
                bound: 1.5 * change.objects as f64 / shards as f64,
            }
        })
        .collect()
}

/// Where the assignment is not what the ring of the `live` shards wants: a ConfigMap on
/// another shard (or still draining), a Secret not on its owner's shard. Unless `complete`,
/// objects with no shard yet (new ones, the sharder has not reached them) are let be. Empty
/// once settled.
pub fn assignment_gaps(
    live: &BTreeSet<String>,
    cms: &[ConfigMap],
    secrets: &[Secret],
    complete: bool,
) -> Vec<String> {
    let ring = Ring::new(live.iter().map(|shard| ShardName::new(shard.as_str())));
    let mut gaps = Vec::new();
    let mut shards_by_name = HashMap::new();
    for cm in cms {
        let (namespace, name) = (cm.namespace().unwrap_or_default(), cm.name_any());
        let want = ring
            .assign(&ring_key("", "ConfigMap", &namespace, &name))
            .map(|shard| shard.as_str().to_owned());
        let (shard, draining) = sharding_labels(&cm.metadata.labels);
        if (shard != want || draining) && (complete || shard.is_some()) {
            gaps.push(format!(
                "configmap {name} is on {shard:?} (draining: {draining}), the ring wants {want:?}"
            ));
        }
        shards_by_name.insert(name, (shard, cm.uid()));
    }
    for secret in secrets {
        let owner = secret
            .owner_references()
            .iter()
            .find(|owner| owner.controller == Some(true) && owner.kind == "ConfigMap");
        let Some(owner) = owner else { continue };
        // An owner deleted (and perhaps created again): the garbage collector's.
        let Some((owner_shard, _)) = shards_by_name
            .get(&owner.name)
            .filter(|(_, uid)| uid.as_deref() == Some(owner.uid.as_str()))
        else {
            continue;
        };
        let (shard, draining) = sharding_labels(&secret.metadata.labels);
        if (&shard != owner_shard || draining) && (complete || shard.is_some()) {
            gaps.push(format!(
                "secret {} is on {shard:?} (draining: {draining}), its owner on {owner_shard:?}",
                secret.name_any()
            ));
        }
    }
    gaps
}

/// Work not done: a ConfigMap whose final version its shard never reconciled successfully,
/// a Secret not mirroring its ConfigMap. Empty once the shards caught up.
pub fn work_gaps(cms: &[ConfigMap], secrets: &[Secret], intervals: &[Interval]) -> Vec<String> {
    let mut reconciled: BTreeSet<(&str, &str, &str)> = BTreeSet::new();
    for r in intervals.iter().filter(|r| r.ok) {
        if let Some(rv) = &r.seen_rv {
            reconciled.insert((shard_of(&r.member), r.key.as_str(), rv.as_str()));
        }
    }
    let mut gaps = Vec::new();
    for cm in cms {
        let key = format!("{}/{}", cm.namespace().unwrap_or_default(), cm.name_any());
        let rv = cm.resource_version().unwrap_or_default();
        let (shard, _) = sharding_labels(&cm.metadata.labels);
        let done = shard
            .as_deref()
            .is_some_and(|shard| reconciled.contains(&(shard, key.as_str(), rv.as_str())));
        if !done {
            gaps.push(format!(
                "configmap {key} at {rv} was never reconciled by its shard {shard:?}"
            ));
        }
    }
    gaps.extend(crate::workload::unmirrored(cms, secrets));
    gaps
}

/// An object's shard label and whether it is draining.
fn sharding_labels(labels: &Option<BTreeMap<String, String>>) -> (Option<String>, bool) {
    let empty = BTreeMap::new();
    let labels = ObjectLabels::of(RING, labels.as_ref().unwrap_or(&empty));
    (labels.shard.map(str::to_owned), labels.draining)
}
