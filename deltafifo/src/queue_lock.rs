//! The locks around a [`QueueState`] and the hand-off between producers and the consumer.
//!
//! A [`QueueLock`] holds the queue behind two locks, always taken in this order: the
//! processing lock (held while the consumer processes a popped key, and by every producer call
//! that reads the consumer's cache), then the queue's own lock:
//!
//! ```text
//! pop, until its callback returns     processing ──▶ state
//! delete, replace (or a page), resync  processing ──▶ state
//! add, update                                         state, or the inbox when it is locked
//! ```
//!
//! Around them it keeps what lets each side go on without waiting for the other: the inbox
//! where an add or update that finds the queue locked parks its delta, the count and wake-up of
//! parked pops, the queue length published for idle pops, the closed flag and the synced flag.

use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use hashbrown::DefaultHashBuilder;
use indexer::ObjectKeyRef;
use kube::Resource;

use crate::cache_line::OwnCacheLine;
use crate::delta::{Delta, Deltas};
use crate::error::Error;
use crate::pop_wait::PopSignal;
use crate::queue_state::QueueState;
use crate::synced::SyncedFlag;

/// Capacity kept by the inbox between bursts of parked writes.
const INBOX_CAPACITY: usize = 256;

/// What a pop took, with the processing lock held until it is processed, and the resource
/// version the consumer's cache reflects once it is (when that is known).
pub(crate) struct Popped<'a, T> {
    pub(crate) processing: MutexGuard<'a, Processing>,
    pub(crate) taken: T,
    pub(crate) reached: Option<String>,
}

/// The queue of a [`DeltaFifo`](crate::DeltaFifo) behind its locks, with the hand-off between
/// producers and the consumer.
pub(crate) struct QueueLock<K> {
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
    /// How many writes `inbox` holds or are being moved out of it into the queue: part of the
    /// backlog a bounded fifo counts.
    inbox_len: AtomicUsize,
    /// Wakes a waiting `pop` when a key is queued or the fifo closes.
    pop_signal: PopSignal,
    /// The number of queued keys, published after every change: a hint for idle pops, so they
    /// look for work without taking the lock. The lock-protected state stays authoritative.
    queued_hint: OwnCacheLine<AtomicUsize>,
    /// Whether the initial list has been processed; never goes back to false.
    synced: SyncedFlag,
    /// The queue's key hasher, shared so producers hash keys before taking the lock.
    hasher: DefaultHashBuilder,
}

/// An add or update waiting in the inbox: its key's hash and the delta to queue.
struct ParkedWrite<K> {
    hash: u64,
    obj: Arc<K>,
    make: fn(Arc<K>) -> Delta<K>,
}

/// The consumer side's bookkeeping, guarded by the processing lock.
#[derive(Default)]
pub(crate) struct Processing {
    /// Keys of the first replace still to be popped and processed.
    pub(crate) initial_population_count: usize,
    /// The first replace is arriving in pages and has not finished: its keys are counted as
    /// they come, and running out of them does not mean the fifo has synced.
    pub(crate) initial_list_open: bool,
    /// Pops so far, for sampling slow-pop timing.
    pub(crate) pops: u64,
}

impl<K> QueueLock<K> {
    /// An empty, open queue.
    pub(crate) fn new() -> Self {
        let hasher = DefaultHashBuilder::default();
        Self {
            processing: Mutex::new(Processing::default()),
            state: Mutex::new(QueueState::new(hasher.clone())),
            inbox: Mutex::new(Vec::new()),
            inbox_pending: OwnCacheLine(AtomicBool::new(false)),
            inbox_len: AtomicUsize::new(0),
            hasher,
            pop_signal: PopSignal::new(),
            queued_hint: OwnCacheLine(AtomicUsize::new(0)),
            synced: SyncedFlag::new(),
        }
    }

    /// The hash of `key` in the queue's table, computed without taking any lock.
    #[inline]
    pub(crate) fn hash_key(&self, key: ObjectKeyRef<'_>) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Whether the fifo has synced, read without locking.
    pub(crate) fn has_synced(&self) -> bool {
        self.synced.is_set()
    }

    /// Waits until [`has_synced`](Self::has_synced) is true.
    pub(crate) async fn synced(&self) {
        self.synced.wait().await;
    }

    /// Publishes that the fifo has synced (once) and wakes those waiting for it.
    pub(crate) fn mark_synced(&self) {
        self.synced.set();
    }

    /// Records that a write happened: before any replace, there is no initial list to wait for.
    pub(crate) fn note_write(&self, state: &mut QueueState<K>) {
        if !state.populated {
            state.populated = true;
            self.mark_synced();
        }
    }

    /// How many keys are queued, as last published.
    pub(crate) fn len(&self) -> usize {
        self.queued_hint.load(Ordering::Acquire)
    }

    /// Queued keys plus the writes parked in the inbox, as last published: the backlog a
    /// bounded fifo counts (a parked write may still merge into a queued key).
    pub(crate) fn backlog(&self) -> usize {
        // The inbox first: writes leave it only after the queue's length counts them, so a
        // length read after it counts every write that its reading missed.
        let parked = self.inbox_len.load(Ordering::Acquire);
        parked + self.len()
    }

    /// Publishes the queue length for idle pops; call after every change, under the lock.
    fn publish_len(&self, state: &QueueState<K>) {
        self.queued_hint.store(state.len(), Ordering::Release);
    }

    /// Whether keys are queued or writes parked, read without locking.
    fn has_work_hint(&self) -> bool {
        self.queued_hint.load(Ordering::Acquire) > 0 || self.inbox_pending.load(Ordering::SeqCst)
    }

    /// Parks the write `make(obj)`, whose key hashes to `hash` and was validated, for the next
    /// holder of the queue's lock, and wakes a parked pop to take it.
    pub(crate) fn park(&self, hash: u64, obj: Arc<K>, make: fn(Arc<K>) -> Delta<K>) {
        {
            let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
            inbox.push(ParkedWrite { hash, obj, make });
            self.inbox_len.fetch_add(1, Ordering::SeqCst);
            self.inbox_pending.store(true, Ordering::SeqCst);
        }
        self.wake_a_parked_pop();
    }

    /// Wakes one parked pop, if any, after a key was queued.
    pub(crate) fn wake_a_parked_pop(&self) {
        self.pop_signal.wake_one();
    }

    /// Takes the processing lock (before `state`, never after). A panicking callback leaves
    /// its bookkeeping consistent, so a poisoned lock is used as is.
    pub(crate) fn lock_processing(&self) -> MutexGuard<'_, Processing> {
        self.processing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Resource> QueueLock<K> {
    /// Locks the queue and moves parked writes into it. A panic never leaves the queue
    /// half-updated (consumer callbacks run under `catch_unwind`, outside this lock), so a
    /// poisoned lock is used as is.
    pub(crate) fn lock(&self) -> MutexGuard<'_, QueueState<K>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.move_inbox(&mut state);
        state
    }

    /// Like [`lock`](Self::lock), but `None` instead of waiting when the queue is locked.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, QueueState<K>>> {
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
        let moved = parked.len();
        for ParkedWrite { hash, obj, make } in parked {
            self.note_write(state);
            // Parked writes had their keys validated, so this cannot fail.
            if let Err(error) = state.enqueue_change(obj, hash, make) {
                tracing::error!(%error, "delta fifo dropped a parked write with an invalid key");
            }
        }
        // The moved writes leave the inbox's count only once the queue's length counts them:
        // in between they count twice, never zero times, so a bounded producer never reads a
        // backlog below the real one.
        self.publish_len(state);
        self.inbox_len.fetch_sub(moved, Ordering::SeqCst);
    }

    /// Publishes the queue length and unlocks; then, if keys were newly queued, wakes a parked
    /// pop (a parked pop saw an empty queue, so only a new key can concern it).
    pub(crate) fn unlock_and_wake(
        &self,
        state: MutexGuard<'_, QueueState<K>>,
        queued_new_keys: bool,
    ) {
        if queued_new_keys {
            self.publish_len(&state);
        }
        drop(state);
        if queued_new_keys {
            self.wake_a_parked_pop();
        }
    }

    /// Waits for the oldest queued key and takes it with all its deltas, returning them with
    /// the processing lock held; [`Error::Closed`] once the queue is closed and empty.
    pub(crate) async fn wait_for_pop(&self) -> Result<Popped<'_, Deltas<K>>, Error> {
        self.pop_signal
            .wait(
                || self.try_take(|state, _| state.pop_front_synced()),
                || self.has_work_hint(),
            )
            .await
    }

    /// Waits for queued keys and takes the oldest ones, up to `max` (at least one), with all
    /// their deltas; never keys of the initial list together with others.
    pub(crate) async fn wait_for_pop_batch(
        &self,
        max: usize,
    ) -> Result<Popped<'_, Vec<Deltas<K>>>, Error> {
        let take = |state: &mut QueueState<K>, processing: &Processing| {
            let initial = processing.initial_population_count;
            let limit = if initial > 0 { max.min(initial) } else { max }.max(1);
            let mut keys = Vec::with_capacity(limit.min(state.len()));
            let mut reached = None;
            while keys.len() < limit {
                let Some((deltas, point)) = state.pop_front_synced() else {
                    break;
                };
                reached = point.or(reached);
                keys.push(deltas);
            }
            (!keys.is_empty()).then_some((keys, reached))
        };
        self.pop_signal
            .wait(|| self.try_take(take), || self.has_work_hint())
            .await
    }

    /// Takes the processing lock, then with the queue locked what `take` takes: `None` when it
    /// takes nothing and the queue is open, `Closed` when it takes nothing and the queue is
    /// closed. On success the processing lock stays held.
    fn try_take<T>(
        &self,
        take: impl FnOnce(&mut QueueState<K>, &Processing) -> Option<(T, Option<String>)>,
    ) -> Option<Result<Popped<'_, T>, Error>> {
        let processing = self.lock_processing();
        let mut state = self.lock();
        match take(&mut state, &processing) {
            Some((taken, reached)) => {
                self.publish_len(&state);
                Some(Ok(Popped {
                    processing,
                    taken,
                    reached,
                }))
            }
            None if state.closed => Some(Err(Error::Closed)),
            None => None,
        }
    }

    /// Closes the queue and wakes every parked pop: pops drain what is queued, then get
    /// [`Error::Closed`].
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.pop_signal.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }
}
