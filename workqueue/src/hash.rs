//! The hash maps used for per-item state.

/// The hasher of every per-item map of this crate.
pub(crate) type BuildHasher = std::collections::hash_map::RandomState;

/// A hash map keyed by queue items.
pub(crate) type Map<K, V> = std::collections::HashMap<K, V, BuildHasher>;

/// Returns an empty [`Map`].
pub(crate) fn new_map<K, V>() -> Map<K, V> {
    Map::with_hasher(BuildHasher::default())
}
