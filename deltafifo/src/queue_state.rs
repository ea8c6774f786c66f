//! The data behind a [`DeltaFifo`](crate::DeltaFifo): queued keys in order and their deltas.
//!
//! Deltas live in a hash table keyed by their own [`ObjectKey`]; the queue holds each key with
//! its hash, so popping finds the entry without hashing again (and, for a long key whose text the
//! queue shares, without reading the text).

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, Equivalent, HashTable};
use indexer::{Error, ObjectKey, ObjectKeyRef};
use kube::Resource;

use crate::{Delta, Deltas};

/// A queued key and its hash in [`QueueState::items`].
struct QueuedKey {
    hash: u64,
    key: ObjectKey,
}

/// Keys in order of first enqueue, each with its pending deltas, plus the sync bookkeeping.
/// Invariant: a key is in `queue` exactly when it is in `items`, and only once.
pub(crate) struct QueueState<K> {
    items: HashTable<Deltas<K>>,
    hasher: DefaultHashBuilder,
    queue: VecDeque<QueuedKey>,
    /// Number of the current relist; entries listed by it carry this number.
    relist: u64,
    /// Whether the first replace, or any add/update/delete, has happened.
    pub(crate) populated: bool,
    pub(crate) closed: bool,
}

impl<K> QueueState<K> {
    /// An empty queue whose table hashes keys with `hasher` (the fifo shares it, to hash keys
    /// before taking the lock).
    pub(crate) fn new(hasher: DefaultHashBuilder) -> Self {
        Self {
            items: HashTable::new(),
            hasher,
            queue: VecDeque::new(),
            relist: 0,
            populated: false,
            closed: false,
        }
    }

    /// How many keys are queued.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn is_queued(&self, key: ObjectKeyRef<'_>) -> bool {
        self.get(key).is_some()
    }

    /// The pending deltas of `key`.
    pub(crate) fn get(&self, key: ObjectKeyRef<'_>) -> Option<&Deltas<K>> {
        let hash = self.hasher.hash_one(key);
        self.items.find(hash, |deltas| key.equivalent(deltas.key()))
    }

    /// The queued keys' deltas, in queue order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Deltas<K>> {
        self.queue
            .iter()
            .filter_map(|queued| self.items.find(queued.hash, |d| d.key() == &queued.key))
    }

    /// The queued keys, in queue order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.queue.iter().map(|queued| &queued.key)
    }

    /// Appends `delta` to the deltas of `key` (whose text is already owned), queueing the key if
    /// new; returns whether it was.
    pub(crate) fn enqueue_owned(&mut self, key: ObjectKey, delta: Delta<K>) -> bool {
        let hash = self.hasher.hash_one(&key);
        let hasher = &self.hasher;
        match self
            .items
            .entry(hash, |d| d.key() == &key, |d| hasher.hash_one(d.key()))
        {
            Entry::Occupied(mut occupied) => {
                occupied.get_mut().push(delta);
                false
            }
            Entry::Vacant(vacant) => {
                self.queue.push_back(QueuedKey {
                    hash,
                    key: key.clone(),
                });
                vacant.insert(Deltas::new(key, delta));
                true
            }
        }
    }

    /// Takes the oldest queued key and its deltas.
    pub(crate) fn pop_front(&mut self) -> Option<Deltas<K>> {
        while let Some(QueuedKey { hash, key }) = self.queue.pop_front() {
            match self.items.find_entry(hash, |d| d.key() == &key) {
                Ok(entry) => return Some(entry.remove().0),
                Err(_) => {
                    tracing::error!(%key, "delta fifo queued a key without deltas; skipping it")
                }
            }
        }
        None
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
        for deltas in self.items.iter_mut() {
            if listed(deltas) {
                continue;
            }
            let obj = deltas.newest().object().cloned();
            deltas.push(tombstone(deltas.key().clone(), obj));
            tombstoned += 1;
        }
        tombstoned
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
        self.enqueue_stamped(obj, hash, make, None)
    }

    /// Like [`enqueue`](Self::enqueue), and marks the key as listed by the current relist.
    pub(crate) fn enqueue_listed(
        &mut self,
        obj: Arc<K>,
        make: fn(Arc<K>) -> Delta<K>,
    ) -> Result<bool, Error> {
        let relist = self.relist;
        let hash = self.hasher.hash_one(ObjectKeyRef::of(obj.as_ref())?);
        self.enqueue_stamped(obj, hash, make, Some(relist))
    }

    fn enqueue_stamped(
        &mut self,
        obj: Arc<K>,
        hash: u64,
        make: fn(Arc<K>) -> Delta<K>,
        relist: Option<u64>,
    ) -> Result<bool, Error> {
        let key = ObjectKeyRef::of(obj.as_ref())?;
        let hasher = &self.hasher;
        match self.items.entry(
            hash,
            |d| key.equivalent(d.key()),
            |d| hasher.hash_one(d.key()),
        ) {
            Entry::Occupied(mut occupied) => {
                let deltas = occupied.get_mut();
                deltas.push(make(obj));
                if let Some(relist) = relist {
                    deltas.listed_in = relist;
                }
                Ok(false)
            }
            Entry::Vacant(vacant) => {
                let key = key.to_owned()?;
                self.queue.push_back(QueuedKey {
                    hash,
                    key: key.clone(),
                });
                let mut deltas = Deltas::new(key, make(obj));
                if let Some(relist) = relist {
                    deltas.listed_in = relist;
                }
                vacant.insert(deltas);
                Ok(true)
            }
        }
    }
}

/// A deletion of `key` whose final state is unknown; `obj` is the last state seen, if any.
pub(crate) fn tombstone<K>(key: ObjectKey, obj: Option<Arc<K>>) -> Delta<K> {
    Delta::Deleted(crate::DeletedObject::Unknown(Box::new(
        crate::DeletedFinalStateUnknown { key, obj },
    )))
}
