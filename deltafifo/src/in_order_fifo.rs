//! [`InOrderFifo`]: client-go's `RealFIFO` as Kubernetes 1.36 runs it (`InOrderInformers`,
//! `AtomicFIFO`, `InOrderInformersBatchProcess` and `UnlockWhileProcessingFIFO` on): every
//! change in arrival order, a relist or a resync as one item, batch pops, and producers that
//! never wait for the consumer's processing. The buffers and the cutting of batches are in
//! `in_order_queue`.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hashbrown::HashMap;
use indexer::{Backpressure, ObjectKey, Store, key_of};
use kube::Resource;

use crate::backlog::Backlog;
use crate::batch::{Batch, Item, Replacement};
use crate::cache_line::OwnCacheLine;
use crate::delta::{DeletedObject, Delta, Deltas};
use crate::error::Error;
use crate::in_order_queue::{Inbound, Outbound, Queued};
use crate::options::{InOrderFifoOptions, TransformFn, transformed};
use crate::pop_wait::PopSignal;
use crate::slow_pop::SlowPop;
use crate::synced::{SyncedFlag, SyncedVersion};

/// A queue of changes between a reflector (the producer, through [`Store`]) and an informer
/// (the consumer, through [`pop_batch`](Self::pop_batch)) that keeps every change, in the
/// order it arrived: client-go's `RealFIFO` with atomic events.
///
/// - Adds, updates and deletes are queued one item each, never merged by key, under the key
///   computed once when they are written. A delete is queued whatever the consumer knows.
/// - [`Store::replace`] queues the whole list as one [`Item::Replaced`]: the consumer sees the
///   replacement at once and works out the deletions against its own cache
///   ([`Replacement::deletions`]); [`Store::resync`] queues one [`Item::Resync`]. The fifo
///   needs no view of the consumer's cache.
/// - [`pop_batch`](Self::pop_batch) hands out up to a given number of items at once (see
///   [`Batch`] for how batches are cut) and runs the consumer's processing without holding
///   anything a producer needs: writes go on meanwhile, bounded only by
///   [`InOrderFifoOptions::backlog_limit`].
/// - [`has_synced`](Self::has_synced) turns true once the first relist has been popped and
///   processed (or a write came before any relist).
/// - Bookmarks ([`bookmark`](Self::bookmark)) travel in the queue too: once everything queued
///   before one has been processed, [`synced_resource_version`](Self::synced_resource_version)
///   is its resource version.
///
/// `InOrderFifo` is a handle: clones share one queue. One consumer at a time: concurrent pops
/// are served one after the other, each after the previous one's processing has returned.
#[doc(alias = "RealFIFO")]
pub struct InOrderFifo<K> {
    shared: Arc<Shared<K>>,
}

struct Shared<K> {
    /// Entries written and not yet taken by the consumer.
    inbound: Mutex<Inbound<K>>,
    /// Entries taken by the consumer and not yet popped; held while a batch is processed.
    /// Always taken before `inbound`.
    outbound: Mutex<Outbound<K>>,
    /// Entries in both buffers, as last published: the backlog, and a hint for idle pops.
    queued: OwnCacheLine<AtomicUsize>,
    /// Wakes a waiting pop.
    signal: PopSignal,
    synced: SyncedFlag,
    /// The resource version of the newest state the consumer has processed.
    synced_version: SyncedVersion,
    /// The bound on the backlog and the producers waiting for room under it.
    backlog: Backlog,
    transform: Option<TransformFn<K>>,
}

/// What a write does to the fifo's sync bookkeeping.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    /// An add, update or delete: before any relist, there is no initial list to wait for.
    Change,
    /// A relist: the first one, before any change, is the initial list.
    Relist,
    /// A resync or a bookmark.
    Other,
}

impl<K> Clone for InOrderFifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<K> std::fmt::Debug for InOrderFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InOrderFifo")
            .field("len", &self.len())
            .field("has_synced", &self.has_synced())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<K> Default for InOrderFifo<K> {
    fn default() -> Self {
        Self::new(InOrderFifoOptions::new())
    }
}

/// Locks `mutex`; a panic never leaves the fifo's buffers half-updated (the consumer's
/// processing runs under `catch_unwind`), so a poisoned lock is used as is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<K> InOrderFifo<K> {
    /// An empty, open fifo.
    pub fn new(options: InOrderFifoOptions<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                inbound: Mutex::new(Inbound::new()),
                outbound: Mutex::new(Outbound::new()),
                queued: OwnCacheLine(AtomicUsize::new(0)),
                signal: PopSignal::new(),
                synced: SyncedFlag::new(),
                synced_version: SyncedVersion::default(),
                backlog: Backlog::new(options.backlog_limit),
                transform: options.transform,
            }),
        }
    }

    /// How many entries are queued (bookmarks included; a relist or a resync is one).
    pub fn len(&self) -> usize {
        self.shared.queued.load(Ordering::Acquire)
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the initial state has been delivered: the first [`Store::replace`] has been
    /// popped and its processing has returned, or an add, update or delete came before any
    /// replace. Never goes back to false.
    pub fn has_synced(&self) -> bool {
        self.shared.synced.is_set()
    }

    /// Waits until [`has_synced`](Self::has_synced) is true.
    pub async fn synced(&self) {
        self.shared.synced.wait().await;
    }

    /// The resource version of the newest state the consumer has processed: that of the last
    /// object, relist or bookmark whose processing has returned ("" before any).
    pub fn synced_resource_version(&self) -> String {
        self.shared.synced_version.get()
    }

    /// Queues a bookmark: the server's state up to `resource_version` has been written. The
    /// consumer never sees it; once everything queued before it has been processed,
    /// [`synced_resource_version`](Self::synced_resource_version) is `resource_version`. An
    /// empty resource version is ignored.
    pub fn bookmark(&self, resource_version: String) {
        if !resource_version.is_empty() {
            self.push(Queued::Bookmark(resource_version), Write::Other);
        }
    }

    /// Closes the fifo: [`pop_batch`](Self::pop_batch) drains what is queued, then returns
    /// [`Error::Closed`]. Producers may still write; what they queue is drained too.
    pub fn close(&self) {
        lock(&self.shared.inbound).closed = true;
        self.shared.signal.wake_all();
        self.shared.backlog.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.inbound).closed
    }

    /// Resolves once the backlog has room ([`InOrderFifoOptions::backlog_limit`]): at once
    /// without a bound, within it, or once the fifo is closed; otherwise when the consumer's
    /// pops bring the queue down to half the bound.
    pub async fn wait_for_room(&self) {
        self.shared
            .backlog
            .wait_for_room(|| self.len(), || self.is_closed())
            .await;
    }

    /// Queues `entry` and wakes a waiting pop.
    fn push(&self, entry: Queued<K>, write: Write) {
        let shared = &*self.shared;
        {
            let mut inbound = lock(&shared.inbound);
            inbound.push(entry);
            if !inbound.populated && write != Write::Other {
                inbound.populated = true;
                match write {
                    Write::Relist => inbound.initial_end = Some(inbound.pushed),
                    _ => shared.synced.set(),
                }
            }
            shared.queued.fetch_add(1, Ordering::SeqCst);
        }
        shared.signal.wake_one();
    }

    /// A copy of every queued item, oldest first (bookmarks left out), for inspection and
    /// tests. Waits while a popped batch is being processed.
    pub fn snapshot(&self) -> Vec<Item<K>> {
        self.with_entries(|entries| {
            entries
                .filter_map(|entry| match entry {
                    Queued::Item(item) => Some(item.clone()),
                    Queued::Bookmark(_) => None,
                })
                .collect()
        })
    }

    /// Calls `read` with every queued entry, oldest first, under both locks.
    fn with_entries<R>(&self, read: impl FnOnce(&mut dyn Iterator<Item = &Queued<K>>) -> R) -> R {
        let outbound = lock(&self.shared.outbound);
        let inbound = lock(&self.shared.inbound);
        read(&mut outbound.entries.iter().chain(inbound.entries.iter()))
    }

    /// The newest queued state of every key with queued changes, in order of first appearance
    /// (a deletion's last state included).
    fn queued_states(&self) -> Vec<(ObjectKey, Arc<K>)> {
        self.with_entries(|entries| {
            let mut states: Vec<(ObjectKey, Arc<K>)> = Vec::new();
            let mut positions: HashMap<ObjectKey, usize> = HashMap::new();
            let mut note = |key: &ObjectKey, obj: &Arc<K>| match positions.get(key) {
                Some(&at) => {
                    if let Some(state) = states.get_mut(at) {
                        state.1 = Arc::clone(obj);
                    }
                }
                None => {
                    positions.insert(key.clone(), states.len());
                    states.push((key.clone(), Arc::clone(obj)));
                }
            };
            for entry in entries {
                match entry {
                    Queued::Item(Item::Deltas(deltas)) => {
                        if let Some(obj) = deltas.newest().object() {
                            note(deltas.key(), obj);
                        }
                    }
                    Queued::Item(Item::Replaced(list)) => {
                        for (key, obj) in list.objects() {
                            note(key, obj);
                        }
                    }
                    Queued::Item(Item::Resync) | Queued::Bookmark(_) => {}
                }
            }
            states
        })
    }
}

impl<K: Resource> InOrderFifo<K> {
    /// Waits for queued items, takes the next batch of at most `max_items` (at least one), and
    /// runs `process` on it. Nothing a producer needs is held meanwhile: writes keep going in
    /// while `process` runs. Returns what `process` returns.
    ///
    /// The batch holds each key at most once, only items of the initial list or none, and a
    /// relist or a resync alone (see [`Batch`]). Bookmarks are taken here, never handed out.
    /// Once the first relist's batch has been processed the fifo has synced; a `process` that
    /// panics counts as processed. There is no requeue: a consumer that fails logs and moves on
    /// (the next relist repairs it).
    ///
    /// Once [`close`](Self::close)d, `pop_batch` still returns what is queued, then
    /// [`Error::Closed`].
    pub async fn pop_batch<R>(
        &self,
        max_items: usize,
        process: impl FnOnce(Batch<K>) -> R,
    ) -> Result<R, Error> {
        let shared = &*self.shared;
        let (mut outbound, items, in_initial_list) = shared
            .signal
            .wait(|| self.try_take(max_items), || !self.is_empty())
            .await?;
        // The state the consumer's cache reflects once this batch is processed.
        let reached = reached_after(&items);
        outbound.pops = outbound.pops.wrapping_add(1);
        let slow = SlowPop::start(outbound.pops, self.len());
        let first_key = slow.is_timed().then(|| first_key(&items)).flatten();
        // The producers waiting for room may go on while this batch is processed.
        shared.backlog.after_pop(self.len());

        let outcome = catch_unwind(AssertUnwindSafe(|| {
            process(Batch::new(items, in_initial_list))
        }));

        if outcome.is_ok()
            && let Some(resource_version) = reached.as_ref().and_then(Reached::resource_version)
        {
            shared.synced_version.set_str(resource_version);
        }
        if outbound.initial_list_processed() {
            shared.synced.set();
        }
        drop(outbound);
        if !self.is_empty() {
            // Chain the wake-up, so another parked pop sees the remaining items.
            shared.signal.wake_one();
        }
        slow.finish(first_key);
        match outcome {
            Ok(result) => Ok(result),
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Takes the next batch with the consumer's lock held: `None` when nothing is queued and
    /// the fifo is open, `Closed` when nothing is queued and it is closed. Bookmarks at the
    /// front are taken on the way: everything before them has been processed.
    #[allow(clippy::type_complexity)]
    fn try_take(
        &self,
        max_items: usize,
    ) -> Option<Result<(MutexGuard<'_, Outbound<K>>, Vec<Item<K>>, bool), Error>> {
        let shared = &*self.shared;
        let mut outbound = lock(&shared.outbound);
        loop {
            if outbound.entries.is_empty() {
                let mut inbound = lock(&shared.inbound);
                if inbound.entries.is_empty() {
                    return inbound.closed.then_some(Err(Error::Closed));
                }
                outbound.refill(&mut inbound);
            }
            let before = outbound.popped;
            if let Some(resource_version) = outbound.take_bookmarks() {
                // This pop holds the consumer's lock: every earlier batch has been processed.
                shared.synced_version.set(resource_version);
                if outbound.initial_list_processed() {
                    shared.synced.set();
                }
            }
            let in_initial_list = !shared.synced.is_set();
            let items = outbound.take_batch(max_items);
            let taken = usize::try_from(outbound.popped - before).unwrap_or(usize::MAX);
            shared.queued.fetch_sub(taken, Ordering::AcqRel);
            if !items.is_empty() {
                return Some(Ok((outbound, items, in_initial_list)));
            }
        }
    }
}

/// The newest state among a batch's items (the last one that has a resource version): what
/// the consumer's cache reflects once it has processed them. An object is kept as is (its
/// resource version read once published), so a pop copies no text.
enum Reached<K> {
    Object(Arc<K>),
    Relist(String),
}

impl<K: Resource> Reached<K> {
    fn resource_version(&self) -> Option<&str> {
        match self {
            Reached::Object(obj) => obj.meta().resource_version.as_deref(),
            Reached::Relist(resource_version) => Some(resource_version),
        }
    }
}

fn reached_after<K: Resource>(items: &[Item<K>]) -> Option<Reached<K>> {
    items.iter().rev().find_map(|item| match item {
        Item::Deltas(deltas) => {
            let obj = deltas.newest().object()?;
            let versioned = obj
                .meta()
                .resource_version
                .as_deref()
                .is_some_and(|rv| !rv.is_empty());
            versioned.then(|| Reached::Object(Arc::clone(obj)))
        }
        Item::Replaced(list) => (!list.resource_version().is_empty())
            .then(|| Reached::Relist(list.resource_version().to_owned())),
        Item::Resync => None,
    })
}

/// The key of the first item, if it has one, for logging a slow pop.
fn first_key<K>(items: &[Item<K>]) -> Option<ObjectKey> {
    match items.first()? {
        Item::Deltas(deltas) => Some(deltas.key().clone()),
        Item::Replaced(_) | Item::Resync => None,
    }
}

impl<K: Resource> InOrderFifo<K> {
    /// Queues one change of `obj`, transformed, under its key.
    fn change(&self, obj: Arc<K>, make: fn(Arc<K>) -> Delta<K>) -> Result<(), indexer::Error> {
        let obj = transformed(self.shared.transform.as_ref(), obj)?;
        let key = key_of(obj.as_ref())?;
        let item = Item::Deltas(Deltas::new(key, make(obj)));
        self.push(Queued::Item(item), Write::Change);
        Ok(())
    }
}

impl<K: Resource + Send + Sync> Store<K> for InOrderFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.change(obj, Delta::Added)
    }

    fn update(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.change(obj, Delta::Updated)
    }

    /// Queues the deletion, whether or not the consumer holds the object.
    fn delete(&self, obj: Arc<K>) -> Result<(), indexer::Error> {
        self.change(obj, |obj| Delta::Deleted(DeletedObject::Known(obj)))
    }

    /// Queues the whole list as one [`Item::Replaced`], each object transformed and keyed.
    /// Fails, queueing nothing, when an object has no key or its transform fails.
    fn replace(
        &self,
        objects: Vec<Arc<K>>,
        resource_version: String,
    ) -> Result<(), indexer::Error> {
        let transform = self.shared.transform.as_ref();
        let objects = objects
            .into_iter()
            .map(|obj| {
                let obj = transformed(transform, obj)?;
                Ok((key_of(obj.as_ref())?, obj))
            })
            .collect::<Result<Vec<_>, indexer::Error>>()?;
        let item = Item::Replaced(Replacement::new(objects, resource_version));
        self.push(Queued::Item(item), Write::Relist);
        Ok(())
    }

    /// Queues one [`Item::Resync`]: the consumer re-delivers what it holds when it gets there.
    fn resync(&self) -> Result<(), indexer::Error> {
        self.push(Queued::Item(Item::Resync), Write::Other);
        Ok(())
    }

    /// While more entries are queued than [`InOrderFifoOptions::backlog_limit`] allows, the
    /// wait for room ([`wait_for_room`](InOrderFifo::wait_for_room)).
    fn backpressure(&self) -> Option<Backpressure<'_>> {
        if self.shared.backlog.is_over(self.len()) {
            Some(Box::pin(self.wait_for_room()))
        } else {
            None
        }
    }

    /// The newest queued state of `key` (a deletion's last state included), if any.
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.queued_states()
            .into_iter()
            .find_map(|(queued, obj)| (&queued == key).then_some(obj))
    }

    /// The newest queued state of every key with queued changes, in order of first appearance.
    fn list(&self) -> Vec<Arc<K>> {
        self.queued_states()
            .into_iter()
            .map(|(_, obj)| obj)
            .collect()
    }

    /// The keys with queued changes, in order of first appearance.
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.queued_states()
            .into_iter()
            .map(|(key, _)| key)
            .collect()
    }
}
