//! [`DeltaFifo`]: client-go's DeltaFIFO, and its rules: what each producer call queues, when a
//! deletion is ignored, what a relist tombstones, what a resync re-delivers, and when the fifo
//! has synced. The locks and the hand-off between producers and the consumer are in
//! `queue_lock`; a relist in pages is in `paged_replace`.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use indexer::{Backpressure, ObjectKey, ObjectKeyRef, ReplaceInPages, Store};
use kube::Resource;

use crate::backlog::Backlog;
use crate::batch::{Batch, Item};
use crate::delta::{DeletedObject, Delta, Deltas};
use crate::error::Error;
use crate::options::DeltaFifoOptions;
use crate::paged_replace::PagedReplace;
use crate::queue_lock::{Popped, QueueLock};
use crate::slow_pop::SlowPop;
use crate::synced::SyncedVersion;

/// A queue of per-object changes between a reflector (the producer, through [`Store`]) and an
/// informer (the consumer, through [`pop`](Self::pop)), with client-go's DeltaFIFO semantics.
///
/// Each key is queued once, in order of its first change; its changes accumulate as [`Deltas`]
/// until popped. A relist ([`Store::replace`]) queues every listed object as `Replaced` and a
/// tombstone ([`DeletedObject::Unknown`]) for every object that vanished; [`Store::resync`]
/// re-delivers known objects as `Sync`.
///
/// `DeltaFifo` is a handle: clones share one queue.
pub struct DeltaFifo<K> {
    shared: Arc<Shared<K>>,
}

struct Shared<K> {
    /// The queue behind its locks (see `queue_lock` for their order).
    queue: QueueLock<K>,
    /// The consumer's known objects, the delta relists queue, and the transform.
    options: DeltaFifoOptions<K>,
    /// The bound on the backlog and the producers waiting for room under it.
    backlog: Backlog,
    /// The resource version of the newest state the consumer's cache is known to reflect.
    synced_version: SyncedVersion,
}

impl<K> Clone for DeltaFifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<K: Resource> std::fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaFifo")
            .field("len", &self.len())
            .field("has_synced", &self.has_synced())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<K> Default for DeltaFifo<K> {
    fn default() -> Self {
        Self::new(DeltaFifoOptions::new())
    }
}

impl<K> DeltaFifo<K> {
    /// An empty, open fifo.
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                queue: QueueLock::new(),
                backlog: Backlog::new(options.backlog_limit),
                synced_version: SyncedVersion::default(),
                options,
            }),
        }
    }
}

impl<K: Resource> DeltaFifo<K> {
    /// Waits for the oldest queued key, takes it with all its deltas, and runs `process` on them
    /// while holding the fifo's processing lock. Every producer call that reads the consumer's
    /// cache through known objects (`delete`, `replace`, `resync`) takes that lock too, so it
    /// never interleaves with the processing and the consumer's cache and the fifo's view of it
    /// cannot diverge; `add` and `update`, which do not read that cache, keep queueing meanwhile.
    /// Returns what `process` returns.
    ///
    /// `process` also receives `is_in_initial_list`: whether these deltas belong to the initial
    /// list, i.e. the fifo had not synced when they were popped. Keep `process` short and
    /// synchronous: deletions and relists wait while it runs. There is no requeue: a consumer that fails logs
    /// and moves on (the next relist or resync repairs it).
    ///
    /// Once [`close`](Self::close)d, `pop` still returns what is queued, then [`Error::Closed`].
    pub async fn pop<R>(&self, process: impl FnOnce(Deltas<K>, bool) -> R) -> Result<R, Error> {
        let popped = self.shared.queue.wait_for_pop().await?;
        Ok(self.process(popped, 1, |deltas| deltas.key().clone(), process))
    }

    /// Waits for queued keys, takes the oldest ones (up to `max_items`, at least one) with all
    /// their deltas, and runs `process` on them as one [`Batch`] of [`Item::Deltas`], under the
    /// processing lock as [`pop`](Self::pop) does. A batch holds only keys of the initial list
    /// or none. Returns what `process` returns.
    pub async fn pop_batch<R>(
        &self,
        max_items: usize,
        process: impl FnOnce(Batch<K>) -> R,
    ) -> Result<R, Error> {
        let popped = self.shared.queue.wait_for_pop_batch(max_items).await?;
        let count = popped.taken.len();
        let first_key = |keys: &Vec<Deltas<K>>| keys.first().map(|deltas| deltas.key().clone());
        let outcome = self.process(popped, count, first_key, |keys, initial| {
            process(Batch::new(
                keys.into_iter().map(Item::Deltas).collect(),
                initial,
            ))
        });
        Ok(outcome)
    }

    /// Runs `process` on what was popped (`keys` keys) while the processing lock is held, then
    /// counts the keys as processed (toward sync) and publishes the resource version the cache
    /// now reflects, if known. `first_key` names the first key for a slow-pop log.
    fn process<T, R, N: Into<Option<ObjectKey>>>(
        &self,
        popped: Popped<'_, T>,
        keys: usize,
        first_key: impl FnOnce(&T) -> N,
        process: impl FnOnce(T, bool) -> R,
    ) -> R {
        let Popped {
            mut processing,
            taken,
            reached,
        } = popped;
        // Something was queued, so the fifo is populated: it has synced exactly when no key of
        // the first list is left to process.
        let is_in_initial_list = processing.initial_population_count > 0;
        processing.pops = processing.pops.wrapping_add(1);
        let slow = SlowPop::start(processing.pops, self.len());
        let key = slow.is_timed().then(|| first_key(&taken).into()).flatten();

        let outcome = catch_unwind(AssertUnwindSafe(|| process(taken, is_in_initial_list)));

        // Count the keys as processed only now that the callback has returned (or panicked).
        if is_in_initial_list {
            let left = processing.initial_population_count.saturating_sub(keys);
            processing.initial_population_count = left;
            if left == 0 && !processing.initial_list_open {
                self.shared.queue.mark_synced();
            }
        }
        if outcome.is_ok()
            && let Some(resource_version) = reached
        {
            self.shared.synced_version.set(resource_version);
        }
        drop(processing);
        if !self.is_empty() {
            // Chain the wake-up, so another parked consumer sees the remaining keys.
            self.shared.queue.wake_a_parked_pop();
        }
        self.shared.backlog.after_pop(self.shared.queue.backlog());
        slow.finish(key);
        match outcome {
            Ok(result) => result,
            Err(panic) => resume_unwind(panic),
        }
    }

    /// The resource version of the newest state the consumer's cache is known to reflect (""
    /// before any): that of a relist or a bookmark once every key queued before it has been
    /// processed, or of the newest add, update or delete once the queue has run dry after it.
    /// As the fifo merges changes by key, the cache may hold newer objects too; never older.
    pub fn synced_resource_version(&self) -> String {
        self.shared.synced_version.get()
    }

    /// Records a bookmark: the server's state up to `resource_version` has been written. Once
    /// every key queued now has been processed (at once if none is queued, and nothing is
    /// being processed), [`synced_resource_version`](Self::synced_resource_version) is
    /// `resource_version`. An empty resource version is ignored.
    pub fn bookmark(&self, resource_version: String) {
        if resource_version.is_empty() {
            return;
        }
        let queue = &self.shared.queue;
        let _processing = queue.lock_processing();
        let reached = queue.lock().mark_resource_version(resource_version);
        if let Some(resource_version) = reached {
            self.shared.synced_version.set(resource_version);
        }
    }

    /// Closes the fifo: [`pop`](Self::pop) drains what is queued, then returns [`Error::Closed`].
    /// Producers may still write; what they queue is drained too.
    pub fn close(&self) {
        self.shared.queue.close();
        self.shared.backlog.wake_all();
    }

    /// Resolves once the backlog has room ([`DeltaFifoOptions::backlog_limit`]): at once without
    /// a bound, within it, or once the fifo is closed; otherwise when the consumer's pops bring
    /// the queued keys down to half the bound. A producer that awaits it before each write keeps
    /// the fifo from growing past the bound while the consumer falls behind.
    pub async fn wait_for_room(&self) {
        let shared = &self.shared;
        shared
            .backlog
            .wait_for_room(|| shared.queue.backlog(), || shared.queue.is_closed())
            .await;
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared.queue.is_closed()
    }

    /// How many keys are queued.
    pub fn len(&self) -> usize {
        self.shared.queue.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the initial state has been delivered: the first [`Store::replace`]'s keys (and its
    /// tombstones) have all been popped and processed, or an add/update/delete came before any
    /// replace. An empty first list syncs at once. A first replace in pages
    /// ([`Store::replace_in_pages`]) counts once it has finished and all its keys have been
    /// processed, however many were processed while pages were still arriving. Never goes back
    /// to false.
    pub fn has_synced(&self) -> bool {
        self.shared.queue.has_synced()
    }

    /// Waits until [`has_synced`](Self::has_synced) is true.
    pub async fn synced(&self) {
        self.shared.queue.synced().await;
    }

    /// A copy of every queued key's deltas, in queue order (for inspection and tests).
    pub fn snapshot(&self) -> Vec<Deltas<K>> {
        let state = self.shared.queue.lock();
        state.iter().cloned().collect()
    }

    /// Records a producer write: marks the fifo populated and queues `make(obj)`. A deletion of an
    /// object that is neither queued nor known is ignored: it was already deleted, for example by
    /// a relist (without known objects, only queued objects count).
    fn record(
        &self,
        obj: Arc<K>,
        make: fn(Arc<K>) -> Delta<K>,
        is_deletion: bool,
    ) -> Result<(), indexer::Error> {
        let queue = &self.shared.queue;
        let obj = self.shared.options.transformed(obj)?;
        let key = ObjectKeyRef::of(obj.as_ref())?;
        let hash = queue.hash_key(key);
        if !is_deletion {
            let Some(mut state) = queue.try_lock() else {
                // The consumer holds the queue: park the write rather than wait for it.
                key.validate()?;
                queue.park(hash, obj, make);
                return Ok(());
            };
            queue.note_write(&mut state);
            let new_key = state.enqueue_change(obj, hash, make)?;
            queue.unlock_and_wake(state, new_key);
            return Ok(());
        }
        // A deletion reads the consumer's cache: it must not interleave with a pop's processing.
        let processing = queue.lock_processing();
        let mut state = queue.lock();
        queue.note_write(&mut state);
        if !state.is_queued(key) {
            let known = self
                .shared
                .options
                .known()
                .is_some_and(|known| known.known_object(key).is_some());
            if !known {
                return Ok(());
            }
        }
        let new_key = state.enqueue_change(obj, hash, make)?;
        drop(processing);
        queue.unlock_and_wake(state, new_key);
        Ok(())
    }
}

impl<K: Resource + Send + Sync> Store<K> for DeltaFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.record(obj, Delta::Added, false)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.record(obj, Delta::Updated, false)
    }

    /// Queues a deletion, unless the object is neither queued nor known (or, without known
    /// objects, not queued): then it was already deleted, for example by a relist, and the call is
    /// ignored.
    fn delete(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.record(obj, |obj| Delta::Deleted(DeletedObject::Known(obj)), true)
    }

    /// Applies a relist atomically: queues every listed object (`Replaced`, or `Sync` when so
    /// configured), then a tombstone for every queued key and every known key without pending
    /// deltas that the list no longer contains. Fails, queueing nothing, when an object has no
    /// key or its transform fails. Once every key queued now has been processed,
    /// [`synced_resource_version`](DeltaFifo::synced_resource_version) is `resource_version`.
    fn replace(
        &self,
        objects: Vec<Arc<K>>,
        resource_version: String,
    ) -> Result<(), indexer::Error> {
        let queue = &self.shared.queue;
        let objects = self.shared.options.prepare_listed(objects)?;
        let make = self.shared.options.relisted();

        let mut processing = queue.lock_processing();
        let mut state = queue.lock();
        state.begin_relist();
        for obj in objects {
            // Every key was validated above, so this cannot fail part-way.
            state.enqueue_listed(obj, make)?;
        }
        state.tombstone_unlisted();
        // Listed keys are queued now; a queued unlisted key was tombstoned just above.
        state.tombstone_vanished_known(self.shared.options.known(), |_| false);
        if !state.populated {
            state.populated = true;
            // A paged first replace that was abandoned is superseded by this one.
            processing.initial_list_open = false;
            // Every queued key is now either listed or tombstoned: all of them form the initial list.
            processing.initial_population_count = state.len();
            if state.len() == 0 {
                queue.mark_synced();
            }
        }
        let reached = state.mark_resource_version(resource_version);
        // Replace and resync only ever add keys, so a non-empty queue may have new ones.
        let queued = state.len() > 0;
        queue.unlock_and_wake(state, queued);
        if let Some(resource_version) = reached {
            self.shared.synced_version.set(resource_version);
        }
        Ok(())
    }

    /// Starts a relist in pages that queues each page as it arrives (so the old and the new
    /// list are never held at once) and tombstones what no page listed at
    /// [`finish`](ReplaceInPages::finish): the same deltas as one [`replace`](Store::replace),
    /// though a consumer may process the first pages before the last arrive. An abandoned
    /// session queues no tombstones: its pages stay queued as `Replaced` deltas of objects the
    /// server listed, and the next complete replace tombstones whatever it does not list.
    fn replace_in_pages(&self) -> Box<dyn ReplaceInPages<K> + '_>
    where
        K: Send + Sync + 'static,
    {
        let shared = &self.shared;
        Box::new(PagedReplace::new(
            &shared.queue,
            &shared.options,
            &shared.synced_version,
        ))
    }

    /// While more keys are queued than [`DeltaFifoOptions::backlog_limit`] allows, the wait for
    /// room ([`wait_for_room`](DeltaFifo::wait_for_room)).
    fn backpressure(&self) -> Option<Backpressure<'_>> {
        if self.shared.backlog.is_over(self.shared.queue.backlog()) {
            Some(Box::pin(self.wait_for_room()))
        } else {
            None
        }
    }

    /// Queues a `Sync` delta for every known object that has no pending deltas (a pending delta is
    /// newer than the cache). Does nothing without known objects.
    fn resync(&self) -> Result<(), indexer::Error> {
        let Some(known) = self.shared.options.known() else {
            return Ok(());
        };
        let queue = &self.shared.queue;
        let _processing = queue.lock_processing();
        let mut state = queue.lock();
        for key in known.known_keys() {
            if state.is_queued(key.as_key_ref()) {
                continue;
            }
            match known.known_object(key.as_key_ref()) {
                Some(obj) => {
                    state.enqueue_owned(key, Delta::Sync(obj));
                }
                None => tracing::warn!(%key, "known object vanished during resync; skipping it"),
            }
        }
        // Replace and resync only ever add keys, so a non-empty queue may have new ones.
        let queued = state.len() > 0;
        queue.unlock_and_wake(state, queued);
        Ok(())
    }

    /// The newest queued state of `key` (for a tombstone, its last known state).
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let state = self.shared.queue.lock();
        state.get(key.as_key_ref())?.newest().object().cloned()
    }

    /// The newest queued state of every queued key, in queue order.
    fn list(&self) -> Vec<Arc<K>> {
        let state = self.shared.queue.lock();
        state
            .iter()
            .filter_map(|deltas| deltas.newest().object().cloned())
            .collect()
    }

    /// The queued keys, in queue order.
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.shared.queue.lock().keys().cloned().collect()
    }
}
