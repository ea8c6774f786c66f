//! [`DeltaFifo`]: client-go's DeltaFIFO.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashSet};
use indexer::{KnownObjects, ObjectKey, ObjectKeyRef, ReplaceInPages, Store};
use kube::Resource;
use tokio::sync::Notify;

use crate::paged_replace::PagedReplace;
use crate::queue_state::{QueueState, tombstone};
use crate::{DeletedObject, Delta, DeltaFifoOptions, Deltas, Error, TransformFn};

/// Capacity kept by the inbox between bursts of parked writes.
const INBOX_CAPACITY: usize = 256;
/// A pop that runs longer than this with more than [`SLOW_POP_BACKLOG`] keys waiting is logged.
const SLOW_POP: Duration = Duration::from_millis(100);
const SLOW_POP_BACKLOG: usize = 10;
/// How often an idle [`DeltaFifo::pop`] yields and looks again before it parks.
const IDLE_POLLS_BEFORE_PARKING: u32 = 16;
/// One pop in this many is timed: slow handlers are slow on every pop, so sampling finds them
/// without reading the clock twice per object.
const SLOW_POP_SAMPLING: u64 = 16;

/// A popped key's deltas, with the processing lock held until they are processed.
type Popped<'a, K> = (MutexGuard<'a, Processing>, Deltas<K>);

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
    /// Held while a popped key is processed, and by every producer call that reads the consumer's
    /// cache through known objects (delete, replace, resync), so that none of them sees a
    /// half-applied pop. `add` and `update` never read that cache and do not take it, so a
    /// producer keeps queueing while the consumer processes. Always taken before `state`.
    processing: Mutex<Processing>,
    /// The queue. A std mutex rather than parking_lot's: producer and consumer contend for it on
    /// every delta, and std's longer spin before sleeping measured faster on `df_2b`.
    state: Mutex<QueueState<K>>,
    /// Adds and updates that found `state` locked. Rather than wait for the lock, such a write
    /// parks its delta here and returns; whoever locks `state` next moves the parked deltas into
    /// the queue first (in order), so no holder of the lock ever misses a write that returned.
    inbox: Mutex<Vec<ParkedWrite<K>>>,
    /// Whether `inbox` holds writes; read without its lock.
    inbox_pending: OwnCacheLine<AtomicBool>,
    /// Wakes a waiting `pop` when a key is queued or the fifo closes.
    item_ready: Notify,
    /// How many `pop`s are parked on `item_ready`; producers notify only when some are, which keeps
    /// the notifier's cache line out of the hot path of a steady stream.
    parked_pops: OwnCacheLine<AtomicUsize>,
    /// The number of queued keys, published after every change: a hint for idle pops, so they
    /// look for work without taking the lock. The lock-protected state stays authoritative.
    queued_hint: OwnCacheLine<AtomicUsize>,
    /// Mirrors `QueueState::has_synced` for lock-free reads; never goes back to false.
    synced: AtomicBool,
    synced_changed: Notify,
    /// The queue's key hasher, shared so producers hash keys before taking the lock.
    hasher: DefaultHashBuilder,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    emit_replaced: bool,
    transform: Option<TransformFn<K>>,
}

/// An add or update waiting in the inbox: its key's hash and the delta to queue.
struct ParkedWrite<K> {
    hash: u64,
    obj: Arc<K>,
    make: fn(Arc<K>) -> Delta<K>,
}

/// The consumer side's bookkeeping, guarded by the processing lock.
#[derive(Default)]
struct Processing {
    /// Keys of the first replace still to be popped and processed.
    initial_population_count: usize,
    /// The first replace is arriving in pages and has not finished: its keys are counted as
    /// they come, and running out of them does not mean the fifo has synced.
    initial_list_open: bool,
    /// Pops so far, for sampling slow-pop timing.
    pops: u64,
}

/// A value on cache lines of its own, so that spinning readers of it do not steal the lines
/// that the lock holder is writing (128 bytes: adjacent-line prefetch pairs lines).
#[repr(align(128))]
struct OwnCacheLine<T>(T);

impl<T> std::ops::Deref for OwnCacheLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Counts a parked `pop` for as long as it lives (also when the pop is cancelled while parked).
struct ParkedPop<'a>(&'a AtomicUsize);

impl<'a> ParkedPop<'a> {
    fn enter(parked: &'a AtomicUsize) -> Self {
        parked.fetch_add(1, Ordering::SeqCst);
        Self(parked)
    }
}

impl Drop for ParkedPop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<K> Shared<K> {
    /// Publishes that the fifo has synced (once) and wakes those waiting for it.
    fn mark_synced(&self) {
        if !self.synced.load(Ordering::Acquire) && !self.synced.swap(true, Ordering::AcqRel) {
            self.synced_changed.notify_waiters();
        }
    }

    /// Records that a write happened: before any replace, there is no initial list to wait for.
    fn note_write(&self, state: &mut QueueState<K>) {
        if !state.populated {
            state.populated = true;
            self.mark_synced();
        }
    }

    /// Publishes the queue length for idle pops; call after every change, under the lock.
    fn publish_len(&self, state: &QueueState<K>) {
        self.queued_hint.store(state.len(), Ordering::Release);
    }

    /// Whether keys are queued or writes parked, read without locking.
    fn has_work_hint(&self) -> bool {
        self.queued_hint.load(Ordering::Acquire) > 0 || self.inbox_pending.load(Ordering::SeqCst)
    }

    /// Parks a write for the next holder of the queue's lock.
    fn park(&self, write: ParkedWrite<K>) {
        let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        inbox.push(write);
        self.inbox_pending.store(true, Ordering::SeqCst);
    }
}

impl<K: Resource> Shared<K> {
    /// Locks the queue and moves parked writes into it. A panic never leaves the queue
    /// half-updated (consumer callbacks run under `catch_unwind`, outside this lock), so a
    /// poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, QueueState<K>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.move_inbox(&mut state);
        state
    }

    /// Like [`lock`](Self::lock), but `None` instead of waiting when the queue is locked.
    fn try_lock(&self) -> Option<MutexGuard<'_, QueueState<K>>> {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        self.move_inbox(&mut state);
        Some(state)
    }

    /// Queues the parked writes, oldest first, ahead of whatever the lock holder does next.
    #[inline]
    fn move_inbox(&self, state: &mut QueueState<K>) {
        if self.inbox_pending.load(Ordering::SeqCst) {
            self.move_inbox_slow(state);
        }
    }

    #[cold]
    fn move_inbox_slow(&self, state: &mut QueueState<K>) {
        let parked = {
            let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
            self.inbox_pending.store(false, Ordering::SeqCst);
            let keep = inbox.capacity().min(INBOX_CAPACITY);
            std::mem::replace(&mut *inbox, Vec::with_capacity(keep))
        };
        for ParkedWrite { hash, obj, make } in parked {
            self.note_write(state);
            // Parked writes had their keys validated, so this cannot fail.
            if let Err(error) = state.enqueue(obj, hash, make) {
                tracing::error!(%error, "delta fifo dropped a parked write with an invalid key");
            }
        }
        self.publish_len(state);
    }

    /// Takes the processing lock (before `state`, never after). A panicking callback leaves
    /// its bookkeeping consistent, so a poisoned lock is used as is.
    fn lock_processing(&self) -> MutexGuard<'_, Processing> {
        self.processing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
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
        let hasher = DefaultHashBuilder::default();
        Self {
            shared: Arc::new(Shared {
                processing: Mutex::new(Processing::default()),
                state: Mutex::new(QueueState::new(hasher.clone())),
                inbox: Mutex::new(Vec::new()),
                inbox_pending: OwnCacheLine(AtomicBool::new(false)),
                hasher,
                item_ready: Notify::new(),
                parked_pops: OwnCacheLine(AtomicUsize::new(0)),
                queued_hint: OwnCacheLine(AtomicUsize::new(0)),
                synced: AtomicBool::new(false),
                synced_changed: Notify::new(),
                known_objects: options.known_objects,
                emit_replaced: options.emit_replaced,
                transform: options.transform,
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
        let mut idle_polls = 0;
        loop {
            // Fast path: take work without registering as a waiter.
            if let Some(popped) = self.try_pop() {
                let (processing, deltas) = popped?;
                return Ok(self.process(processing, deltas, process));
            }
            // A busy producer usually queues more within microseconds: yield to the runtime a few
            // times before parking, so a steady stream does not cost a thread wake-up per key.
            if idle_polls < IDLE_POLLS_BEFORE_PARKING {
                idle_polls += 1;
                tokio::task::yield_now().await;
                while idle_polls < IDLE_POLLS_BEFORE_PARKING && !self.shared.has_work_hint() {
                    idle_polls += 1;
                    tokio::task::yield_now().await;
                }
                continue;
            }
            // Count ourselves as parked before the last look, so that a producer queueing after
            // that look sees the count and wakes us (both sides use SeqCst).
            let _parked = ParkedPop::enter(&self.shared.parked_pops);
            let mut ready = pin!(self.shared.item_ready.notified());
            ready.as_mut().enable();
            if let Some(popped) = self.try_pop() {
                let (processing, deltas) = popped?;
                return Ok(self.process(processing, deltas, process));
            }
            ready.await;
        }
    }

    /// Takes the processing lock and the oldest key: `None` when the queue is empty and open,
    /// `Closed` when it is empty and closed. On success the processing lock stays held.
    fn try_pop(&self) -> Option<Result<Popped<'_, K>, Error>> {
        let processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
        match state.pop_front() {
            Some(deltas) => {
                self.shared.publish_len(&state);
                Some(Ok((processing, deltas)))
            }
            None if state.closed => Some(Err(Error::Closed)),
            None => None,
        }
    }

    fn process<R>(
        &self,
        mut processing: MutexGuard<'_, Processing>,
        deltas: Deltas<K>,
        process: impl FnOnce(Deltas<K>, bool) -> R,
    ) -> R {
        // Something was queued, so the fifo is populated: it has synced exactly when no key of
        // the first list is left to process.
        let is_in_initial_list = processing.initial_population_count > 0;
        let backlog = self.len();
        processing.pops = processing.pops.wrapping_add(1);
        let timed = backlog > SLOW_POP_BACKLOG && processing.pops.is_multiple_of(SLOW_POP_SAMPLING);
        let started = timed.then(Instant::now);
        let key = started.map(|_| deltas.key().clone());

        let outcome = catch_unwind(AssertUnwindSafe(|| process(deltas, is_in_initial_list)));

        // Count the key as processed only now that its callback has returned (or panicked).
        if is_in_initial_list {
            processing.initial_population_count -= 1;
            if processing.initial_population_count == 0 && !processing.initial_list_open {
                self.shared.mark_synced();
            }
        }
        drop(processing);
        if !self.is_empty() {
            // Chain the wake-up, so another parked consumer sees the remaining keys.
            self.wake_a_parked_pop();
        }
        if let (Some(started), Some(key)) = (started, key) {
            let took = started.elapsed();
            if took > SLOW_POP {
                tracing::warn!(%key, ?took, backlog, "delta fifo pop was slow: slow event handlers block the queue");
            }
        }
        match outcome {
            Ok(result) => result,
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Closes the fifo: [`pop`](Self::pop) drains what is queued, then returns [`Error::Closed`].
    /// Producers may still write; what they queue is drained too.
    pub fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.item_ready.notify_waiters();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// How many keys are queued.
    pub fn len(&self) -> usize {
        self.shared.queued_hint.load(Ordering::Acquire)
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
        self.shared.synced.load(Ordering::Acquire)
    }

    /// Waits until [`has_synced`](Self::has_synced) is true.
    pub async fn synced(&self) {
        loop {
            let mut changed = pin!(self.shared.synced_changed.notified());
            changed.as_mut().enable();
            if self.has_synced() {
                return;
            }
            changed.await;
        }
    }

    /// A copy of every queued key's deltas, in queue order (for inspection and tests).
    pub fn snapshot(&self) -> Vec<Deltas<K>> {
        let state = self.shared.lock();
        state.iter().cloned().collect()
    }

    /// Wakes one parked [`pop`](Self::pop), if any, after a key was queued.
    fn wake_a_parked_pop(&self) {
        if self.shared.parked_pops.load(Ordering::SeqCst) > 0 {
            self.shared.item_ready.notify_one();
        }
    }
}

impl<K: Resource> DeltaFifo<K> {
    /// Applies the transform (outside the lock); a failure names the object's key.
    fn transformed(&self, obj: Arc<K>) -> Result<Arc<K>, indexer::Error> {
        let Some(transform) = &self.shared.transform else {
            return Ok(obj);
        };
        let original = Arc::clone(&obj);
        transform(obj).map_err(|source| indexer::Error::Rejected {
            key: indexer::key_of(original.as_ref())
                .map_or_else(|_| "<unnamed>".to_owned(), |k| k.to_string()),
            source: format!("transform failed: {source}").into(),
        })
    }

    /// The delta a relisted object is queued as.
    fn relisted(&self) -> fn(Arc<K>) -> Delta<K> {
        if self.shared.emit_replaced {
            Delta::Replaced
        } else {
            Delta::Sync
        }
    }

    /// Transforms the objects of a relist and checks their keys; fails on the first that
    /// cannot be keyed or transformed.
    fn prepare_listed(&self, objects: Vec<Arc<K>>) -> Result<Vec<Arc<K>>, indexer::Error> {
        objects
            .into_iter()
            .map(|obj| {
                let obj = self.transformed(obj)?;
                ObjectKeyRef::of(obj.as_ref())?.validate()?;
                Ok(obj)
            })
            .collect()
    }

    /// Queues a tombstone for every known key that is neither queued nor `listed`: an object
    /// that vanished while the watch was down. Returns how many keys it queued.
    fn tombstone_vanished_known(
        &self,
        state: &mut QueueState<K>,
        listed: impl Fn(&ObjectKey) -> bool,
    ) -> usize {
        let Some(known) = &self.shared.known_objects else {
            return 0;
        };
        let mut queued = 0;
        for key in known.known_keys() {
            if listed(&key) || state.is_queued(key.as_key_ref()) {
                continue;
            }
            let obj = known.known_object(key.as_key_ref());
            if obj.is_none() {
                tracing::debug!(%key, "known object vanished during replace; tombstone carries no state");
            }
            state.enqueue_owned(key.clone(), tombstone(key, obj));
            queued += 1;
        }
        queued
    }

    /// Queues one page of a paged replace as [`Store::replace`] queues its list, and adds the
    /// page's keys to `seen`. Fails, queueing nothing of the page, when an object has no key
    /// or its transform fails.
    pub(crate) fn replace_page(
        &self,
        objects: Vec<Arc<K>>,
        seen: &mut HashSet<ObjectKey>,
    ) -> Result<(), indexer::Error> {
        let objects = self.prepare_listed(objects)?;
        let make = self.relisted();
        let mut processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
        let initial = !state.populated;
        processing.initial_list_open |= initial;
        let mut queued_new_keys = false;
        for obj in objects {
            // Every key was validated above, so none of this fails part-way.
            let key = ObjectKeyRef::of(obj.as_ref())?;
            if !seen.contains(&key) {
                seen.insert(key.to_owned()?);
            }
            let hash = self.shared.hasher.hash_one(key);
            let new_key = state.enqueue(obj, hash, make)?;
            if new_key && initial {
                processing.initial_population_count += 1;
            }
            queued_new_keys |= new_key;
        }
        drop(processing);
        self.unlock_and_wake(state, queued_new_keys);
        Ok(())
    }

    /// Ends a paged replace whose pages listed the keys in `seen`: a tombstone for every queued
    /// or known key that no page listed, exactly as [`Store::replace`] does at its end.
    pub(crate) fn finish_paged_replace(&self, seen: &HashSet<ObjectKey>) {
        let mut processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
        state.tombstone_queued_unless(|deltas| seen.contains(deltas.key()));
        let tombstoned = self.tombstone_vanished_known(&mut state, |key| seen.contains(key));
        if !state.populated {
            state.populated = true;
            processing.initial_list_open = false;
            processing.initial_population_count += tombstoned;
            if processing.initial_population_count == 0 {
                self.shared.mark_synced();
            }
        }
        let queued = state.len() > 0;
        drop(processing);
        self.unlock_and_wake(state, queued);
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
        let obj = self.transformed(obj)?;
        let key = ObjectKeyRef::of(obj.as_ref())?;
        let hash = self.shared.hasher.hash_one(key);
        if !is_deletion {
            let Some(mut state) = self.shared.try_lock() else {
                // The consumer holds the queue: park the write rather than wait for it.
                key.validate()?;
                self.shared.park(ParkedWrite { hash, obj, make });
                self.wake_a_parked_pop();
                return Ok(());
            };
            self.shared.note_write(&mut state);
            let new_key = state.enqueue(obj, hash, make)?;
            self.unlock_and_wake(state, new_key);
            return Ok(());
        }
        // A deletion reads the consumer's cache: it must not interleave with a pop's processing.
        let processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
        self.shared.note_write(&mut state);
        if !state.is_queued(key) {
            let known = self
                .shared
                .known_objects
                .as_ref()
                .is_some_and(|known| known.known_object(key).is_some());
            if !known {
                return Ok(());
            }
        }
        let new_key = state.enqueue(obj, hash, make)?;
        drop(processing);
        self.unlock_and_wake(state, new_key);
        Ok(())
    }

    /// Publishes the queue length and unlocks; then, if keys were newly queued, wakes a parked
    /// pop (a parked pop saw an empty queue, so only a new key can concern it).
    fn unlock_and_wake(&self, state: MutexGuard<'_, QueueState<K>>, queued_new_keys: bool) {
        if queued_new_keys {
            self.shared.publish_len(&state);
        }
        drop(state);
        if queued_new_keys {
            self.wake_a_parked_pop();
        }
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
    /// key or its transform fails. The resource version is not used by the fifo.
    fn replace(
        &self,
        objects: Vec<Arc<K>>,
        _resource_version: String,
    ) -> Result<(), indexer::Error> {
        let objects = self.prepare_listed(objects)?;
        let make = self.relisted();

        let mut processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
        state.begin_relist();
        for obj in objects {
            // Every key was validated above, so this cannot fail part-way.
            state.enqueue_listed(obj, make)?;
        }
        state.tombstone_unlisted();
        // Listed keys are queued now; a queued unlisted key was tombstoned just above.
        self.tombstone_vanished_known(&mut state, |_| false);
        if !state.populated {
            state.populated = true;
            // A paged first replace that was abandoned is superseded by this one.
            processing.initial_list_open = false;
            // Every queued key is now either listed or tombstoned: all of them form the initial list.
            processing.initial_population_count = state.len();
            if state.len() == 0 {
                self.shared.mark_synced();
            }
        }
        // Replace and resync only ever add keys, so a non-empty queue may have new ones.
        let queued = state.len() > 0;
        self.unlock_and_wake(state, queued);
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
        Box::new(PagedReplace::new(self))
    }

    /// Queues a `Sync` delta for every known object that has no pending deltas (a pending delta is
    /// newer than the cache). Does nothing without known objects.
    fn resync(&self) -> Result<(), indexer::Error> {
        let Some(known) = &self.shared.known_objects else {
            return Ok(());
        };
        let _processing = self.shared.lock_processing();
        let mut state = self.shared.lock();
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
        self.unlock_and_wake(state, queued);
        Ok(())
    }

    /// The newest queued state of `key` (for a tombstone, its last known state).
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let state = self.shared.lock();
        state.get(key.as_key_ref())?.newest().object().cloned()
    }

    /// The newest queued state of every queued key, in queue order.
    fn list(&self) -> Vec<Arc<K>> {
        let state = self.shared.lock();
        state
            .iter()
            .filter_map(|deltas| deltas.newest().object().cloned())
            .collect()
    }

    /// The queued keys, in queue order.
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.shared.lock().keys().cloned().collect()
    }
}
