//! The data behind a [`DeltaFifo`](crate::DeltaFifo): queued keys in order and their deltas.
//!
//! The deltas themselves sit in a ring, in queue order, each at a sequence number (the number of
//! keys queued before it, wrapping). A small hash table maps each key to its sequence number, so a
//! lookup probes 4-byte entries (a table that stays in cache for hundreds of thousands of keys)
//! and then reads one ring slot. Keys are only ever removed at the front (by a pop), so the ring
//! never has holes, and a key's slot is found from its sequence number without searching.

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::{DefaultHashBuilder, Equivalent, HashTable};
use indexer::{Error, KnownObjects, ObjectKey, ObjectKeyRef};
use kube::Resource;

use crate::delta::{DeletedFinalStateUnknown, DeletedObject, Delta, Deltas};
use crate::sync_points::SyncPoints;

/// Keys in order of first enqueue, each with its pending deltas, plus the sync bookkeeping.
/// Invariant: every entry of `ring` has exactly one sequence number in `positions`, and every
/// sequence number there names an entry of `ring`.
pub(crate) struct QueueState<K> {
    /// The sequence number of each queued key, hashed by the key.
    positions: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// The queued keys' deltas, oldest first: `ring[i]` has sequence number `head + i`.
    ring: VecDeque<Deltas<K>>,
    /// The sequence number of the oldest queued key (`ring[0]`).
    head: u32,
    /// Number of the current relist; entries listed by it carry this number.
    relist: u64,
    /// Where the consumer's cache comes to reflect a known resource version.
    sync_points: SyncPoints,
    /// Whether the first replace, or any add/update/delete, has happened.
    pub(crate) populated: bool,
    pub(crate) closed: bool,
}

impl<K> QueueState<K> {
    /// An empty queue whose table hashes keys with `hasher` (the fifo shares it, to hash keys
    /// before taking the lock).
    pub(crate) fn new(hasher: DefaultHashBuilder) -> Self {
        Self {
            positions: HashTable::new(),
            hasher,
            ring: VecDeque::new(),
            head: 0,
            relist: 0,
            sync_points: SyncPoints::default(),
            populated: false,
            closed: false,
        }
    }

    /// How many keys are queued.
    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }

    pub(crate) fn is_queued(&self, key: ObjectKeyRef<'_>) -> bool {
        self.get(key).is_some()
    }

    /// The pending deltas of `key`.
    pub(crate) fn get(&self, key: ObjectKeyRef<'_>) -> Option<&Deltas<K>> {
        let hash = self.hasher.hash_one(key);
        let seq = *self.positions.find(hash, |&seq| {
            slot(&self.ring, self.head, seq).is_some_and(|d| key.equivalent(d.key()))
        })?;
        slot(&self.ring, self.head, seq)
    }

    /// The queued keys' deltas, in queue order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Deltas<K>> {
        self.ring.iter()
    }

    /// The queued keys, in queue order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.ring.iter().map(Deltas::key)
    }

    /// Appends `delta` to the deltas of `key` (whose text is already owned), queueing the key if
    /// new; returns whether it was.
    pub(crate) fn enqueue_owned(&mut self, key: ObjectKey, delta: Delta<K>) -> bool {
        let hash = self.hasher.hash_one(&key);
        match self.find_mut(hash, |d| d.key() == &key) {
            Some((_, deltas)) => {
                deltas.push(delta);
                false
            }
            None => {
                self.push_new(hash, Deltas::new(key, delta));
                true
            }
        }
    }

    /// The queued deltas with key hash `hash` that `matches` accepts, and their sequence number.
    fn find_mut(
        &mut self,
        hash: u64,
        matches: impl Fn(&Deltas<K>) -> bool,
    ) -> Option<(u32, &mut Deltas<K>)> {
        let (ring, head) = (&self.ring, self.head);
        let seq = *self
            .positions
            .find(hash, |&seq| slot(ring, head, seq).is_some_and(&matches))?;
        let deltas = self.ring.get_mut(seq.wrapping_sub(head) as usize)?;
        Some((seq, deltas))
    }

    /// Queues a key that is not queued yet, with its first deltas; `hash` is its key's hash.
    /// Returns its sequence number.
    fn push_new(&mut self, hash: u64, deltas: Deltas<K>) -> u32 {
        // At most 2^32 - 1 keys are queued at once (far beyond memory), so the sequence numbers
        // of queued keys never collide.
        let seq = self.head.wrapping_add(self.ring.len() as u32);
        self.ring.push_back(deltas);
        let (ring, head, hasher) = (&self.ring, self.head, &self.hasher);
        self.positions.insert_unique(hash, seq, |&seq| {
            slot(ring, head, seq).map_or(0, |d| hasher.hash_one(d.key()))
        });
        seq
    }

    /// A bookmark or a relist at `resource_version` was written: returns it if the consumer's
    /// cache reflects it already (nothing is queued; the caller holds the processing lock, so
    /// nothing is being processed either), else keeps it until the keys queued now are popped.
    pub(crate) fn mark_resource_version(&mut self, resource_version: String) -> Option<String> {
        if self.ring.is_empty() {
            self.sync_points.reached_at_once();
            return Some(resource_version);
        }
        let tail = self.head.wrapping_add(self.ring.len() as u32);
        self.sync_points.mark(tail, resource_version);
        None
    }

    /// Takes the oldest queued key and its deltas.
    pub(crate) fn pop_front(&mut self) -> Option<Deltas<K>> {
        let deltas = self.ring.pop_front()?;
        let seq = self.head;
        self.head = self.head.wrapping_add(1);
        let hash = self.hasher.hash_one(deltas.key());
        match self.positions.find_entry(hash, |&queued| queued == seq) {
            Ok(position) => {
                position.remove();
            }
            Err(_) => {
                tracing::error!(key = %deltas.key(), "delta fifo popped a key it had not indexed")
            }
        }
        Some(deltas)
    }

    /// Starts a relist: entries enqueued by [`enqueue_listed`](Self::enqueue_listed) from now on
    /// count as listed until the next relist.
    pub(crate) fn begin_relist(&mut self) {
        self.relist += 1;
    }

    /// Adds a tombstone to every queued key that the current relist did not list; returns how many.
    pub(crate) fn tombstone_unlisted(&mut self) -> usize {
        let relist = self.relist;
        self.tombstone_queued_unless(|deltas| deltas.listed_in == relist)
    }

    /// Adds a tombstone to every queued key whose deltas `listed` rejects; returns how many.
    pub(crate) fn tombstone_queued_unless(&mut self, listed: impl Fn(&Deltas<K>) -> bool) -> usize {
        let mut tombstoned = 0;
        for deltas in self.ring.iter_mut() {
            if listed(deltas) {
                continue;
            }
            let obj = deltas.newest().object().cloned();
            deltas.push(tombstone(deltas.key().clone(), obj));
            tombstoned += 1;
        }
        tombstoned
    }

    /// Queues a tombstone for every key of `known` that is neither queued nor `listed`: an
    /// object that vanished while the watch was down. Returns how many keys it queued (none
    /// without known objects).
    pub(crate) fn tombstone_vanished_known(
        &mut self,
        known: Option<&dyn KnownObjects<K>>,
        listed: impl Fn(&ObjectKey) -> bool,
    ) -> usize {
        let Some(known) = known else {
            return 0;
        };
        let mut queued = 0;
        for key in known.known_keys() {
            if listed(&key) || self.is_queued(key.as_key_ref()) {
                continue;
            }
            let obj = known.known_object(key.as_key_ref());
            if obj.is_none() {
                tracing::debug!(%key, "known object vanished during replace; tombstone carries no state");
            }
            self.enqueue_owned(key.clone(), tombstone(key, obj));
            queued += 1;
        }
        queued
    }
}

impl<K: Resource> QueueState<K> {
    /// Appends the delta `make(obj)` to the deltas of `obj`'s key, whose hash (by this queue's
    /// hasher) is `hash`, queueing the key if new; returns whether it was. Only a new key
    /// allocates.
    pub(crate) fn enqueue(
        &mut self,
        obj: Arc<K>,
        hash: u64,
        make: fn(Arc<K>) -> Delta<K>,
    ) -> Result<bool, Error> {
        self.enqueue_at(obj, hash, make, None)
            .map(|(new_key, _)| new_key)
    }

    /// Like [`enqueue`](Self::enqueue), for an add, update or delete: a change whose resource
    /// version the consumer's cache reflects once it has been processed and the queue has run
    /// dry.
    pub(crate) fn enqueue_change(
        &mut self,
        obj: Arc<K>,
        hash: u64,
        make: fn(Arc<K>) -> Delta<K>,
    ) -> Result<bool, Error> {
        let (new_key, seq) = self.enqueue_at(obj, hash, make, None)?;
        self.sync_points.changed(seq);
        Ok(new_key)
    }

    /// Takes the oldest queued key and its deltas, with the resource version the consumer's
    /// cache reflects once it has processed them, if that is known.
    pub(crate) fn pop_front_synced(&mut self) -> Option<(Deltas<K>, Option<String>)> {
        let seq = self.head;
        let deltas = self.pop_front()?;
        let reached = self
            .sync_points
            .popped(seq, self.head, &deltas, self.ring.is_empty());
        Some((deltas, reached))
    }

    /// Like [`enqueue`](Self::enqueue), and marks the key as listed by the current relist.
    pub(crate) fn enqueue_listed(
        &mut self,
        obj: Arc<K>,
        make: fn(Arc<K>) -> Delta<K>,
    ) -> Result<bool, Error> {
        let relist = self.relist;
        let hash = self.hasher.hash_one(ObjectKeyRef::of(obj.as_ref())?);
        self.enqueue_at(obj, hash, make, Some(relist))
            .map(|(new_key, _)| new_key)
    }

    /// Appends `make(obj)` to its key's deltas (stamped as listed by `relist`, if any); returns
    /// whether the key is new, and its sequence number.
    fn enqueue_at(
        &mut self,
        obj: Arc<K>,
        hash: u64,
        make: fn(Arc<K>) -> Delta<K>,
        relist: Option<u64>,
    ) -> Result<(bool, u32), Error> {
        let key = ObjectKeyRef::of(obj.as_ref())?;
        if let Some((seq, deltas)) = self.find_mut(hash, |d| key.equivalent(d.key())) {
            deltas.push(make(obj));
            if let Some(relist) = relist {
                deltas.listed_in = relist;
            }
            return Ok((false, seq));
        }
        let mut deltas = Deltas::new(key.to_owned()?, make(obj));
        if let Some(relist) = relist {
            deltas.listed_in = relist;
        }
        Ok((true, self.push_new(hash, deltas)))
    }
}

/// The deltas at sequence number `seq` of a ring whose oldest entry has sequence number `head`.
fn slot<K>(ring: &VecDeque<Deltas<K>>, head: u32, seq: u32) -> Option<&Deltas<K>> {
    ring.get(seq.wrapping_sub(head) as usize)
}

/// A deletion of `key` whose final state is unknown; `obj` is the last state seen, if any.
pub(crate) fn tombstone<K>(key: ObjectKey, obj: Option<Arc<K>>) -> Delta<K> {
    Delta::Deleted(DeletedObject::Unknown(Box::new(DeletedFinalStateUnknown {
        key,
        obj,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> ObjectKey {
        ObjectKey::namespaced("ns", &format!("obj-{i}")).unwrap()
    }

    fn added(i: usize) -> Delta<usize> {
        Delta::Added(Arc::new(i))
    }

    /// Sequence numbers wrap around `u32::MAX`; keys queued across the wrap are still found,
    /// appended to and popped in order.
    #[test]
    fn sequence_numbers_wrap_without_losing_keys() {
        let mut state = QueueState::new(DefaultHashBuilder::default());
        state.head = u32::MAX - 2;
        for i in 0..6 {
            assert!(state.enqueue_owned(key(i), added(i)));
        }
        for i in 0..6 {
            assert!(!state.enqueue_owned(key(i), added(100 + i)));
            assert_eq!(state.get(key(i).as_key_ref()).map(Deltas::len), Some(2));
        }
        for i in 0..6 {
            let deltas = state.pop_front().unwrap();
            assert_eq!(deltas.key(), &key(i));
            assert!(!state.is_queued(key(i).as_key_ref()));
            for later in i + 1..6 {
                assert!(state.is_queued(key(later).as_key_ref()));
            }
        }
        assert!(state.pop_front().is_none());
        assert_eq!(state.positions.len(), 0);
    }

    /// A key popped and queued again goes to the back, behind keys queued meanwhile.
    #[test]
    fn a_requeued_key_goes_to_the_back() {
        let mut state = QueueState::new(DefaultHashBuilder::default());
        state.enqueue_owned(key(1), added(1));
        state.enqueue_owned(key(2), added(2));
        assert_eq!(state.pop_front().unwrap().key(), &key(1));
        assert!(state.enqueue_owned(key(1), added(3)));
        let order: Vec<_> = state.keys().cloned().collect();
        assert_eq!(order, vec![key(2), key(1)]);
        assert_eq!(state.len(), 2);
    }
}
