//! [`Ring`]: consistent hashing of objects onto the shards of a ring, with virtual nodes.
//!
//! Each shard owns [`VIRTUAL_NODES_PER_SHARD`] tokens on a 64-bit circle: the
//! stable hash of `"<shard>#<index>"`. An object key hashes to a point on the
//! circle and belongs to the shard of the first token at or after that point (wrapping past the
//! top). Adding a shard takes over only the arcs its own tokens cut off; removing one hands only
//! its arcs to their successors, so a membership change moves about `objects ÷ shards` objects,
//! all of them to or from the shard that came or went.

use std::fmt;

use crate::sharding::hash::stable_hash;

/// Tokens (virtual nodes) per shard. With 1 000, each shard's share of the circle deviates from
/// `1 ÷ shards` by about 3 % (one standard deviation), so a ring of a few shards stays well within
/// ±15 % of an even split; building the ring for 10 shards hashes 10 000 short strings (well under
/// a millisecond), which happens only when membership changes. Every replica must use the same
/// count, so it is a constant, not a setting.
pub const VIRTUAL_NODES_PER_SHARD: u32 = 1_000;

/// The name of a shard: the name of its Lease, its `holderIdentity` while it is alive, and the
/// value of the shard label on the objects assigned to it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardName(String);

impl ShardName {
    /// The shard called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShardName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ShardName {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for ShardName {
    fn from(name: String) -> Self {
        Self(name)
    }
}

impl AsRef<str> for ShardName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The key the ring hashes for an object: `group/kind/namespace/name` (the core group is empty,
/// a cluster-scoped object's namespace too). The same in every process, and distinct across
/// kinds, so `Ring::assign(&ring_key(..))` tells which shard the ring wants for any object.
pub fn ring_key(group: &str, kind: &str, namespace: &str, name: &str) -> String {
    format!("{group}/{kind}/{namespace}/{name}")
}

/// A consistent-hash ring over a set of shards (see the [module docs](crate::sharding)). Immutable: build a
/// new ring when the membership changes. The same set of shards gives the same ring in every
/// process, whatever the order they were given in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ring {
    /// The shards, sorted and without duplicates.
    shards: Vec<ShardName>,
    /// Every token and the index of its shard in `shards`, sorted by token (ties by shard name,
    /// so the order never depends on how the shards were given).
    tokens: Vec<(u64, usize)>,
}

impl Ring {
    /// The ring of `shards` (duplicates count once).
    pub fn new(shards: impl IntoIterator<Item = ShardName>) -> Self {
        let mut shards: Vec<ShardName> = shards.into_iter().collect();
        shards.sort();
        shards.dedup();
        let mut tokens = Vec::with_capacity(shards.len() * VIRTUAL_NODES_PER_SHARD as usize);
        for (index, shard) in shards.iter().enumerate() {
            for virtual_node in 0..VIRTUAL_NODES_PER_SHARD {
                tokens.push((stable_hash(&format!("{shard}#{virtual_node}")), index));
            }
        }
        tokens.sort_unstable();
        Self { shards, tokens }
    }

    /// The shard `key` belongs to; `None` when the ring has no shard.
    pub fn assign(&self, key: &str) -> Option<&ShardName> {
        let point = stable_hash(key);
        let next = self.tokens.partition_point(|(token, _)| *token < point);
        let (_, shard) = self.tokens.get(next).or_else(|| self.tokens.first())?;
        self.shards.get(*shard)
    }

    /// The shards of the ring, sorted by name.
    pub fn shards(&self) -> &[ShardName] {
        &self.shards
    }

    /// Whether `shard` is on the ring.
    pub fn contains(&self, shard: &str) -> bool {
        self.shards
            .binary_search_by(|name| name.as_str().cmp(shard))
            .is_ok()
    }

    /// How many shards the ring has.
    pub fn len(&self) -> usize {
        self.shards.len()
    }

    /// Whether the ring has no shard (then [`assign`](Self::assign) returns `None`).
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    const OBJECTS: usize = 10_000;

    fn ring_of(names: &[&str]) -> Ring {
        Ring::new(names.iter().map(|name| ShardName::from(*name)))
    }

    fn keys() -> impl Iterator<Item = String> {
        (0..OBJECTS).map(|index| format!("apps/Deployment/team-{}/app-{index}", index % 7))
    }

    fn assignment(ring: &Ring) -> BTreeMap<String, ShardName> {
        keys()
            .filter_map(|key| ring.assign(&key).cloned().map(|shard| (key, shard)))
            .collect()
    }

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|index| format!("shard-{index}")).collect()
    }

    #[test]
    fn an_empty_ring_assigns_nothing() {
        let ring = Ring::new([]);
        assert!(ring.is_empty());
        assert_eq!(ring.assign("apps/Deployment/default/web"), None);
    }

    #[test]
    fn a_ring_of_one_assigns_everything_to_it() {
        let ring = ring_of(&["only"]);
        assert!(keys().all(|key| ring.assign(&key).map(ShardName::as_str) == Some("only")));
    }

    #[test]
    fn assignment_is_deterministic_and_independent_of_shard_order() {
        let forward = ring_of(&["a", "b", "c", "d"]);
        let backward = ring_of(&["d", "c", "b", "a", "c"]);
        assert_eq!(forward, backward);
        assert_eq!(forward.len(), 4);
        assert_eq!(
            assignment(&forward),
            assignment(&ring_of(&["a", "b", "c", "d"]))
        );
        assert_eq!(assignment(&forward), assignment(&backward));
    }

    /// Pins a few assignments: if the hash or the token naming ever changed, replicas of two
    /// builds would disagree, so this must fail first.
    #[test]
    fn assignment_is_stable_across_builds() {
        let ring = ring_of(&["shard-0", "shard-1", "shard-2"]);
        let pinned: Vec<(&str, Option<&str>)> = ["a", "b", "apps/Deployment/default/web"]
            .into_iter()
            .map(|key| (key, ring.assign(key).map(ShardName::as_str)))
            .collect();
        assert_eq!(
            pinned,
            [
                ("a", Some("shard-1")),
                ("b", Some("shard-2")),
                ("apps/Deployment/default/web", Some("shard-1")),
            ]
        );
    }

    #[test]
    fn objects_spread_evenly_within_fifteen_percent() {
        for shards in [2, 3, 4, 5, 8] {
            let ring = Ring::new(names(shards).into_iter().map(ShardName::from));
            let mut counts: BTreeMap<ShardName, usize> = BTreeMap::new();
            for shard in assignment(&ring).into_values() {
                *counts.entry(shard).or_default() += 1;
            }
            assert_eq!(counts.len(), shards, "every shard gets objects");
            let even = OBJECTS as f64 / shards as f64;
            for (shard, count) in counts {
                let deviation = (count as f64 - even).abs() / even;
                assert!(
                    deviation <= 0.15,
                    "{shard} holds {count} of {OBJECTS} over {shards} shards ({:.1} % off)",
                    deviation * 100.0
                );
            }
        }
    }

    /// Adding shard `n` to a ring of `n`: only objects moving *to* the new shard move, and no
    /// more than 1.5 × objects ÷ shards of them.
    #[test]
    fn adding_a_shard_moves_only_objects_to_it() {
        for before in [2, 3, 4, 5] {
            let all = names(before + 1);
            let added = ShardName::from(all[before].as_str());
            let old = assignment(&Ring::new(
                all[..before].iter().cloned().map(ShardName::from),
            ));
            let new = assignment(&Ring::new(all.iter().cloned().map(ShardName::from)));
            let moved: Vec<_> = old.keys().filter(|key| old[*key] != new[*key]).collect();
            assert!(!moved.is_empty(), "the new shard takes over some objects");
            assert!(
                moved.iter().all(|key| new[*key] == added),
                "{before} → +1: a move not to the new shard"
            );
            let limit = 1.5 * OBJECTS as f64 / (before + 1) as f64;
            assert!(
                moved.len() as f64 <= limit,
                "{before} → +1: {} moved, limit {limit}",
                moved.len()
            );
        }
    }

    /// Removing a shard: only the objects it held move, and they spread over the others.
    #[test]
    fn removing_a_shard_moves_only_its_objects() {
        for before in [3, 4, 5] {
            let all = names(before);
            let removed = ShardName::from(all[1].as_str());
            let old = assignment(&Ring::new(all.iter().cloned().map(ShardName::from)));
            let remaining = all.iter().filter(|name| **name != all[1]).cloned();
            let new = assignment(&Ring::new(remaining.map(ShardName::from)));
            let moved: Vec<_> = old.keys().filter(|key| old[*key] != new[*key]).collect();
            assert!(
                moved.iter().all(|key| old[*key] == removed),
                "{before} → −1: a move not from the removed shard"
            );
            let held = old.values().filter(|shard| **shard == removed).count();
            assert_eq!(moved.len(), held, "every object of the removed shard moves");
            let limit = 1.5 * OBJECTS as f64 / before as f64;
            assert!(
                moved.len() as f64 <= limit,
                "{before} → −1: {} moved, limit {limit}",
                moved.len()
            );
            let receivers: std::collections::BTreeSet<_> =
                moved.iter().map(|key| &new[*key]).collect();
            assert_eq!(
                receivers.len(),
                before - 1,
                "the removed shard's objects spread over every other shard"
            );
        }
    }

    #[test]
    fn contains_names_exactly_the_ring_members() {
        let ring = ring_of(&["b", "a"]);
        assert_eq!(ring.shards(), [ShardName::from("a"), ShardName::from("b")]);
        assert!(ring.contains("a") && ring.contains("b"));
        assert!(!ring.contains("c"));
    }
}
