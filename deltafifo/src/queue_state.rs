//! The data behind a [`DeltaFifo`](crate::DeltaFifo): queued keys in order and their deltas.

use std::collections::VecDeque;
use std::sync::Arc;

use hashbrown::HashMap;
use indexer::{Error, ObjectKey, ObjectKeyRef};
use kube::Resource;

use crate::{Delta, Deltas};

/// Keys in order of first enqueue, each with its pending deltas, plus the sync bookkeeping.
/// Invariant: a key is in `queue` exactly when it is in `items`, and only once.
pub(crate) struct QueueState<K> {
    pub(crate) items: HashMap<ObjectKey, Deltas<K>>,
    pub(crate) queue: VecDeque<ObjectKey>,
    /// Whether the first replace, or any add/update/delete, has happened.
    pub(crate) populated: bool,
    /// Keys of the first replace still to be popped and processed.
    pub(crate) initial_population_count: usize,
    pub(crate) closed: bool,
}

impl<K> QueueState<K> {
    pub(crate) fn new() -> Self {
        Self {
            items: HashMap::new(),
            queue: VecDeque::new(),
            populated: false,
            initial_population_count: 0,
            closed: false,
        }
    }

    /// client-go's `HasSynced`: populated, and the initial list entirely processed.
    pub(crate) fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    pub(crate) fn is_queued(&self, key: ObjectKeyRef<'_>) -> bool {
        self.items.contains_key(&key)
    }

    /// Appends `delta` to the deltas of `key` (whose text is already owned), queueing the key if
    /// new; returns whether it was.
    pub(crate) fn enqueue_owned(&mut self, key: ObjectKey, delta: Delta<K>) -> bool {
        match self.items.get_mut(&key) {
            Some(deltas) => {
                deltas.push(delta);
                false
            }
            None => {
                self.insert_new(key, delta);
                true
            }
        }
    }

    fn insert_new(&mut self, key: ObjectKey, delta: Delta<K>) {
        self.queue.push_back(key.clone());
        self.items.insert(key.clone(), Deltas::new(key, delta));
    }

    /// Takes the oldest queued key and its deltas.
    pub(crate) fn pop_front(&mut self) -> Option<Deltas<K>> {
        while let Some(key) = self.queue.pop_front() {
            match self.items.remove(&key) {
                Some(deltas) => return Some(deltas),
                None => {
                    tracing::error!(%key, "delta fifo queued a key without deltas; skipping it")
                }
            }
        }
        None
    }

    /// Adds a tombstone to every queued key missing from `listed`; returns how many.
    pub(crate) fn tombstone_queued_keys_not_in(
        &mut self,
        listed: &hashbrown::HashSet<ObjectKeyRef<'_>>,
    ) -> usize {
        let mut tombstoned = 0;
        for (key, deltas) in self.items.iter_mut() {
            if listed.contains(&key.as_key_ref()) {
                continue;
            }
            let obj = deltas.newest().and_then(Delta::object).cloned();
            deltas.push(tombstone(key.clone(), obj));
            tombstoned += 1;
        }
        tombstoned
    }
}

impl<K: Resource> QueueState<K> {
    /// Appends the delta `make(obj)` to the deltas of `obj`'s key, queueing the key if new;
    /// returns whether it was. Only a new key allocates.
    pub(crate) fn enqueue(
        &mut self,
        obj: Arc<K>,
        make: fn(Arc<K>) -> Delta<K>,
    ) -> Result<bool, Error> {
        let key = ObjectKeyRef::of(obj.as_ref())?;
        match self.items.get_mut(&key) {
            Some(deltas) => {
                deltas.push(make(obj));
                Ok(false)
            }
            None => {
                let key = key.to_owned()?;
                self.insert_new(key, make(obj));
                Ok(true)
            }
        }
    }
}

/// A deletion of `key` whose final state is unknown; `obj` is the last state seen, if any.
pub(crate) fn tombstone<K>(key: ObjectKey, obj: Option<Arc<K>>) -> Delta<K> {
    Delta::Deleted(crate::DeletedObject::Unknown(
        crate::DeletedFinalStateUnknown { key, obj },
    ))
}
