//! The hash maps used for per-item state.
//!
//! Every queue operation hashes its item two or three times, so the hasher dominates the
//! cost of an operation on short keys such as `namespace/name`. `foldhash` (hashbrown's own
//! default) is several times faster than std's SipHash on such keys; it is seeded randomly
//! per map, which keeps colliding keys hard to precompute.

/// The hasher of every per-item map of this crate.
pub(crate) type BuildHasher = foldhash::fast::RandomState;

/// A hash map keyed by queue items.
pub(crate) type Map<K, V> = std::collections::HashMap<K, V, BuildHasher>;

/// Returns an empty [`Map`].
pub(crate) fn new_map<K, V>() -> Map<K, V> {
    Map::with_hasher(BuildHasher::default())
}
