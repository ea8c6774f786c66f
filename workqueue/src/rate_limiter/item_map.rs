//! A map from items to per-item state that hashes each item once per operation and clones
//! it only when it inserts it.

use std::hash::{BuildHasher as _, Hash};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::hash::BuildHasher;

pub(crate) struct ItemMap<T, V> {
    table: HashTable<(T, V)>,
    hasher: BuildHasher,
}

impl<T, V> ItemMap<T, V> {
    pub(crate) fn new() -> Self {
        Self {
            table: HashTable::new(),
            hasher: BuildHasher::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }
}

impl<T: Eq + Hash, V> ItemMap<T, V> {
    pub(crate) fn get(&self, item: &T) -> Option<&V> {
        let hash = self.hasher.hash_one(item);
        self.table
            .find(hash, |(held, _)| held == item)
            .map(|(_, value)| value)
    }

    /// The value of `item`, inserting `make()` (and a clone of `item`) if it has none.
    pub(crate) fn get_or_insert_with(&mut self, item: &T, make: impl FnOnce() -> V) -> &mut V
    where
        T: Clone,
    {
        let hash = self.hasher.hash_one(item);
        let hasher = &self.hasher;
        match self.table.entry(
            hash,
            |(held, _)| held == item,
            |(held, _)| hasher.hash_one(held),
        ) {
            Entry::Occupied(entry) => &mut entry.into_mut().1,
            Entry::Vacant(entry) => &mut entry.insert((item.clone(), make())).into_mut().1,
        }
    }

    pub(crate) fn remove(&mut self, item: &T) -> Option<V> {
        let hash = self.hasher.hash_one(item);
        let entry = self.table.find_entry(hash, |(held, _)| held == item).ok()?;
        let ((_, value), _) = entry.remove();
        Some(value)
    }
}
