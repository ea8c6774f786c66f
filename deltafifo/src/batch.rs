//! What a fifo hands its consumer in one pop: a [`Batch`] of [`Item`]s, each carrying the key
//! the fifo computed when the change was written. A relist reaches the consumer whole, as a
//! [`Replacement`], and the consumer works out the deletions against its own cache.

use std::sync::Arc;

use hashbrown::HashSet;
use indexer::{KnownObjects, ObjectKey};

use crate::delta::{DeletedFinalStateUnknown, Deltas};

/// One unit of work a fifo hands its consumer.
#[derive(Debug)]
pub enum Item<K> {
    /// Changes of one object, oldest first, under the key computed when they were written: one
    /// change from an [`InOrderFifo`](crate::InOrderFifo), a key's accumulated changes from a
    /// [`DeltaFifo`](crate::DeltaFifo).
    Deltas(Deltas<K>),
    /// A relist, whole (only from an [`InOrderFifo`](crate::InOrderFifo)): the consumer's
    /// state becomes the listed objects; whatever it holds that the list lacks was deleted while
    /// the watch was down ([`Replacement::deletions`]).
    Replaced(Replacement<K>),
    /// A resync (only from an [`InOrderFifo`](crate::InOrderFifo)): the consumer re-delivers
    /// every object it holds, as it holds it when it reaches this item.
    Resync,
}

impl<K> Clone for Item<K> {
    fn clone(&self) -> Self {
        match self {
            Item::Deltas(deltas) => Item::Deltas(deltas.clone()),
            Item::Replaced(list) => Item::Replaced(list.clone()),
            Item::Resync => Item::Resync,
        }
    }
}

/// The items of one pop, oldest first.
///
/// A batch holds each key at most once, and either only items of the initial list or none
/// (see [`in_initial_list`](Self::in_initial_list)), so a consumer may apply it to its cache in
/// one step. A [`Replacement`] or a resync always comes in a batch of its own.
#[derive(Debug)]
pub struct Batch<K> {
    items: Vec<Item<K>>,
    in_initial_list: bool,
}

impl<K> Batch<K> {
    pub(crate) fn new(items: Vec<Item<K>>, in_initial_list: bool) -> Self {
        Self {
            items,
            in_initial_list,
        }
    }

    /// Whether these items belong to the initial list: the fifo had not synced when they were
    /// popped.
    pub fn in_initial_list(&self) -> bool {
        self.in_initial_list
    }

    /// How many items the batch holds (at least one).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Always false: a fifo never pops an empty batch.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items, oldest first.
    pub fn items(&self) -> &[Item<K>] {
        &self.items
    }

    /// The items, oldest first, by value.
    pub fn into_items(self) -> Vec<Item<K>> {
        self.items
    }
}

impl<K> IntoIterator for Batch<K> {
    type Item = Item<K>;
    type IntoIter = std::vec::IntoIter<Item<K>>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// A relist as one item: every listed object with its key (computed once, when the list was
/// written to the fifo), and the list's resource version.
#[derive(Debug)]
pub struct Replacement<K> {
    objects: Vec<(ObjectKey, Arc<K>)>,
    resource_version: String,
}

impl<K> Clone for Replacement<K> {
    fn clone(&self) -> Self {
        Self {
            objects: self.objects.clone(),
            resource_version: self.resource_version.clone(),
        }
    }
}

impl<K> Replacement<K> {
    pub(crate) fn new(objects: Vec<(ObjectKey, Arc<K>)>, resource_version: String) -> Self {
        Self {
            objects,
            resource_version,
        }
    }

    /// The resource version of the list.
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// The listed objects with their keys, in list order.
    pub fn objects(&self) -> &[(ObjectKey, Arc<K>)] {
        &self.objects
    }

    /// The listed objects with their keys, by value.
    pub fn into_objects(self) -> Vec<(ObjectKey, Arc<K>)> {
        self.objects
    }

    /// How many objects were listed.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the list was empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// A tombstone for every key `known` (the consumer's cache, before it applies this list)
    /// holds that the list lacks, carrying the last state `known` had, in key order: the
    /// objects deleted while the watch was down, as [`DeltaFifo`](crate::DeltaFifo)'s relist
    /// tombstones them.
    pub fn deletions(&self, known: &dyn KnownObjects<K>) -> Vec<DeletedFinalStateUnknown<K>> {
        let known_keys = known.known_keys();
        if known_keys.is_empty() {
            // An initial list: nothing to compare the listed keys with.
            return Vec::new();
        }
        let listed: HashSet<&ObjectKey> = self.objects.iter().map(|(key, _)| key).collect();
        let mut gone: Vec<ObjectKey> = known_keys
            .into_iter()
            .filter(|key| !listed.contains(key))
            .collect();
        gone.sort_unstable();
        gone.into_iter()
            .map(|key| {
                let obj = known.known_object(key.as_key_ref());
                DeletedFinalStateUnknown { key, obj }
            })
            .collect()
    }
}
