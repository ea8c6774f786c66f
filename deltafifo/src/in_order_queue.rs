//! The two buffers behind an [`InOrderFifo`](crate::InOrderFifo) and how a batch is cut from
//! them.
//!
//! Producers append to the [`Inbound`] buffer under its lock and nothing else. The consumer
//! keeps an [`Outbound`] buffer of its own: when that runs dry it swaps the whole inbound
//! buffer into it (one pointer swap under the inbound lock), then cuts batches from it without
//! the inbound lock. The consumer holds the outbound lock while it processes a batch, which
//! producers never take: a slow consumer never holds up a write.
//!
//! ```text
//! add, update, delete, replace, resync, bookmark    inbound
//! pop: take the next batch, then process it         outbound ──(refill: swap)──▶ inbound
//! ```

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};
use kube::Resource;

use crate::batch::Item;

/// An entry of the queue: an item for the consumer, or a bookmark the fifo consumes itself.
pub(crate) enum Queued<K> {
    /// Handed to the consumer.
    Item(Item<K>),
    /// The server's state up to this resource version has been written before this entry.
    Bookmark(String),
}

/// The producers' side: entries not yet taken by the consumer.
pub(crate) struct Inbound<K> {
    pub(crate) entries: VecDeque<Queued<K>>,
    /// Entries ever queued.
    pub(crate) pushed: u64,
    /// Whether the first replace, or any add, update or delete, has been queued.
    pub(crate) populated: bool,
    /// How many entries had been queued once the first replace was (when that replace came
    /// before any other write): the consumer has synced once it has processed that many.
    pub(crate) initial_end: Option<u64>,
    pub(crate) closed: bool,
}

impl<K> Inbound<K> {
    pub(crate) fn new() -> Self {
        Self {
            entries: VecDeque::new(),
            pushed: 0,
            populated: false,
            initial_end: None,
            closed: false,
        }
    }

    /// Appends `entry`.
    pub(crate) fn push(&mut self, entry: Queued<K>) {
        self.entries.push_back(entry);
        self.pushed += 1;
    }
}

/// The consumer's side: entries taken from [`Inbound`] and not yet popped.
pub(crate) struct Outbound<K> {
    pub(crate) entries: VecDeque<Queued<K>>,
    /// Entries ever popped (bookmarks included).
    pub(crate) popped: u64,
    /// [`Inbound::initial_end`] as of the last refill.
    initial_end: Option<u64>,
    /// Pops so far, for sampling slow-pop timing.
    pub(crate) pops: u64,
    /// The keys of the batch being cut, as indices into it, to keep each key once per batch.
    batch_keys: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl<K> Outbound<K> {
    pub(crate) fn new() -> Self {
        Self {
            entries: VecDeque::new(),
            popped: 0,
            initial_end: None,
            pops: 0,
            batch_keys: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// Moves every inbound entry here (both buffers keep their allocations, swapped); returns
    /// how many. Only when this buffer is empty, so the order is kept.
    pub(crate) fn refill(&mut self, inbound: &mut Inbound<K>) -> usize {
        debug_assert!(self.entries.is_empty());
        std::mem::swap(&mut self.entries, &mut inbound.entries);
        self.initial_end = inbound.initial_end;
        self.entries.len()
    }

    /// Takes the bookmarks at the front; returns the newest one's resource version.
    pub(crate) fn take_bookmarks(&mut self) -> Option<String> {
        let mut newest = None;
        while let Some(Queued::Bookmark(_)) = self.entries.front() {
            if let Some(Queued::Bookmark(resource_version)) = self.entries.pop_front() {
                newest = Some(resource_version);
            }
            self.popped += 1;
        }
        newest
    }

    /// Whether the consumer has processed every entry of the initial list.
    pub(crate) fn initial_list_processed(&self) -> bool {
        self.initial_end.is_some_and(|end| self.popped >= end)
    }

    /// How many more entries the next batch may take without crossing the end of the initial
    /// list (unbounded once it is behind, or when there is none).
    fn room_before_initial_end(&self) -> usize {
        match self.initial_end {
            Some(end) if end > self.popped => {
                usize::try_from(end - self.popped).unwrap_or(usize::MAX)
            }
            _ => usize::MAX,
        }
    }
}

impl<K: Resource> Outbound<K> {
    /// Cuts the next batch from the front: up to `max` items, each key at most once, never
    /// across the end of the initial list nor across a bookmark; a relist or a resync alone.
    /// Empty when the front is a bookmark or nothing is queued.
    pub(crate) fn take_batch(&mut self, max: usize) -> Vec<Item<K>> {
        let limit = max.max(1).min(self.room_before_initial_end());
        if limit == 1 {
            // One item: no keys to compare.
            if !matches!(self.entries.front(), Some(Queued::Item(_))) {
                return Vec::new();
            }
            let Some(Queued::Item(item)) = self.entries.pop_front() else {
                return Vec::new();
            };
            self.popped += 1;
            return vec![item];
        }
        let mut batch = Vec::with_capacity(limit.min(self.entries.len()));
        self.batch_keys.clear();
        while batch.len() < limit {
            match self.entries.front() {
                Some(Queued::Item(Item::Deltas(deltas))) => {
                    let hash = self.hasher.hash_one(deltas.key());
                    let seen = self.batch_keys.find(hash, |&index| {
                        matches!(batch.get(index as usize), Some(Item::Deltas(other)) if other.key() == deltas.key())
                    });
                    if seen.is_some() {
                        break;
                    }
                    let index = batch.len() as u32;
                    let hasher = &self.hasher;
                    self.batch_keys.insert_unique(hash, index, |&index| {
                        match batch.get(index as usize) {
                            Some(Item::Deltas(other)) => hasher.hash_one(other.key()),
                            _ => 0,
                        }
                    });
                }
                Some(Queued::Item(Item::Replaced(_) | Item::Resync)) if batch.is_empty() => {
                    if let Some(Queued::Item(item)) = self.entries.pop_front() {
                        batch.push(item);
                    }
                    break;
                }
                Some(Queued::Item(_) | Queued::Bookmark(_)) | None => break,
            }
            if let Some(Queued::Item(item)) = self.entries.pop_front() {
                batch.push(item);
            }
        }
        self.popped += batch.len() as u64;
        batch
    }
}
