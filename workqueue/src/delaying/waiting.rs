//! The items of a [`DelayingQueue`](crate::DelayingQueue) or a
//! [`PriorityQueue`](crate::PriorityQueue) that wait for their ready time.
//!
//! A min-heap orders small entries (ready time, sequence number, node index) by ready time,
//! then by insertion; the items themselves live in a slab of nodes found through a
//! `HashTable`, so that each item is stored once, hashed once per insertion and never cloned.
//! An item that is already waiting keeps the earlier of its two ready times (and the higher of
//! its two priorities; the delaying queue's priority is `()`): moving it earlier pushes a new
//! heap entry and leaves the old one stale (its sequence number no longer matches the node's),
//! to be skipped when it surfaces.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::hash::{BuildHasher as _, Hash};
use std::time::Duration;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use tokio::time::Instant;

use crate::delaying::timer::{Next, Plan, TimerState};
use crate::hash::{BuildHasher, Slot, short_hash, table_hash};

/// Capacity kept when the set empties; larger buffers are released.
const KEEP_CAPACITY: usize = 1024;

/// What scheduling an item did.
pub(crate) enum Schedule<T> {
    /// Shut down: dropped.
    Closed,
    /// Already waiting: a rate-limited add declines to count another failure.
    AlreadyWaiting,
    /// Due now: add it to the queue.
    Now(T),
    /// Waiting; the timer task must be woken if `wake`.
    Later {
        /// The item is due before the timer task's deadline.
        wake: bool,
    },
}

struct Node<T, P> {
    /// `None` once the node is free.
    item: Option<T>,
    /// 32 bits of the item's hash (see [`Slot`]).
    hash: u32,
    /// The sequence number of the node's live heap entry.
    seq: u64,
    /// The node's ready time, in ticks.
    at: u64,
    /// The priority the item will be added with.
    priority: P,
}

/// A heap entry; ordered so that `BinaryHeap` (a max-heap) pops the earliest first.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Due {
    at: u64,
    seq: u64,
    index: u32,
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The waiting items, each with the priority `P` it will be added with.
pub(crate) struct Waiting<T, P = ()> {
    heap: BinaryHeap<Due>,
    /// Node indices of the waiting items.
    table: HashTable<Slot>,
    nodes: Vec<Node<T, P>>,
    free: Vec<u32>,
    hasher: BuildHasher,
    next_seq: u64,
    /// Ready times are kept as nanoseconds since `base` (8 bytes instead of 16).
    base: Instant,
    /// Set by shutdown: nothing is accepted any more.
    pub(crate) closed: bool,
    pub(crate) timer: TimerState,
}

fn holds<T: Eq, P>(nodes: &[Node<T, P>], index: u32, item: &T) -> bool {
    nodes
        .get(index as usize)
        .and_then(|node| node.item.as_ref())
        .is_some_and(|held| held == item)
}

impl<T, P> Waiting<T, P> {
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            table: HashTable::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            hasher: BuildHasher::default(),
            next_seq: 0,
            base: Instant::now(),
            closed: false,
            timer: TimerState::Idle,
        }
    }

    /// The number of waiting items.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    fn tick(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The instant of `tick`, at most about 30 years after `base`.
    fn instant(&self, tick: u64) -> Instant {
        let far = self
            .base
            .checked_add(Duration::from_secs(86_400 * 365 * 30))
            .unwrap_or(self.base);
        self.base
            .checked_add(Duration::from_nanos(tick))
            .map_or(far, |at| at.min(far))
    }

    /// Discards every waiting item and refuses new ones.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.heap = BinaryHeap::new();
        self.table = HashTable::new();
        self.nodes = Vec::new();
        self.free = Vec::new();
    }

    /// Records that an insertion at `at` happened; returns whether the timer must be woken.
    fn wake_for(&mut self, at: u64) -> bool {
        let wake = match self.timer {
            TimerState::Running => false,
            TimerState::Idle => true,
            TimerState::Sleeping(deadline) => at < self.tick(deadline),
        };
        if wake {
            self.timer = TimerState::Running;
        }
        wake
    }

    fn alloc(&mut self, node: Node<T, P>) -> Option<u32> {
        if let Some(index) = self.free.pop() {
            if let Some(free) = self.nodes.get_mut(index as usize) {
                *free = node;
            }
            return Some(index);
        }
        let index = u32::try_from(self.nodes.len()).ok()?;
        self.nodes.push(node);
        Some(index)
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
}

impl<T: Eq + Hash, P: Copy + Ord> Waiting<T, P> {
    /// Whether `item` is waiting.
    pub(crate) fn contains(&self, item: &T) -> bool {
        let hash = table_hash(short_hash(self.hasher.hash_one(item)));
        self.table
            .find(hash, |slot| holds(&self.nodes, slot.index, item))
            .is_some()
    }

    /// Stops `item` waiting; returns the priority it had, `None` if it was not waiting. Its
    /// heap entry is left behind, stale.
    #[inline]
    pub(crate) fn remove(&mut self, item: &T) -> Option<P> {
        if self.table.is_empty() {
            return None;
        }
        self.remove_slow(item)
    }

    #[cold]
    fn remove_slow(&mut self, item: &T) -> Option<P> {
        let hash = table_hash(short_hash(self.hasher.hash_one(item)));
        let nodes = &mut self.nodes;
        let entry = self
            .table
            .find_entry(hash, |slot| holds(nodes, slot.index, item))
            .ok()?;
        let index = entry.get().index;
        entry.remove();
        let node = nodes.get_mut(index as usize)?;
        node.item = None;
        self.free.push(index);
        Some(node.priority)
    }

    /// If `item` is waiting, gives it `priority` if that is higher (its ready time stays) and
    /// returns `true`.
    pub(crate) fn raise(&mut self, item: &T, priority: P) -> bool {
        if self.table.is_empty() {
            return false;
        }
        let hash = table_hash(short_hash(self.hasher.hash_one(item)));
        let Some(slot) = self
            .table
            .find(hash, |slot| holds(&self.nodes, slot.index, item))
        else {
            return false;
        };
        if let Some(node) = self.nodes.get_mut(slot.index as usize) {
            node.priority = node.priority.max(priority);
        }
        true
    }

    /// Makes `item` wait, with `priority`, for a ready time still to be decided: until a later
    /// [`insert`](Waiting::insert) gives it one, it waits (about 30 years) without waking the
    /// timer task.
    pub(crate) fn hold(&mut self, item: T, priority: P) {
        let timer = self.timer;
        let far = self.instant(u64::MAX);
        // The timer need not be woken for an item that is not due: keep its state as it was.
        let _ = self.insert(item, far, priority);
        self.timer = timer;
    }

    /// Makes `item` wait until `at`, or until its current ready time if that is earlier, to be
    /// added with `priority`, or with its current priority if that is higher.
    pub(crate) fn insert(&mut self, item: T, at: Instant, priority: P) -> Schedule<T> {
        if self.closed {
            return Schedule::Closed;
        }
        let at = self.tick(at);
        let hash = short_hash(self.hasher.hash_one(&item));
        let nodes = &self.nodes;
        let entry = self.table.entry(
            table_hash(hash),
            |slot| holds(nodes, slot.index, &item),
            Slot::table_hash,
        );
        match entry {
            Entry::Occupied(entry) => {
                let index = entry.get().index;
                let seq = self.next_seq();
                let Some(node) = self.nodes.get_mut(index as usize) else {
                    return Schedule::Later { wake: false };
                };
                node.priority = node.priority.max(priority);
                if node.at <= at {
                    return Schedule::Later { wake: false };
                }
                node.at = at;
                node.seq = seq;
                self.heap.push(Due { at, seq, index });
            }
            Entry::Vacant(entry) => {
                let seq = self.next_seq;
                let node = Node {
                    item: Some(item),
                    hash,
                    seq,
                    at,
                    priority,
                };
                // Written out (rather than `self.alloc`) because `entry` borrows the table.
                let index = match self.free.pop() {
                    Some(index) => {
                        if let Some(free) = self.nodes.get_mut(index as usize) {
                            *free = node;
                        }
                        index
                    }
                    None => {
                        let Ok(index) = u32::try_from(self.nodes.len()) else {
                            tracing::error!("delaying queue is full; dropping an add_after");
                            return Schedule::Later { wake: false };
                        };
                        self.nodes.push(node);
                        index
                    }
                };
                entry.insert(Slot { index, hash });
                self.next_seq += 1;
                self.heap.push(Due { at, seq, index });
            }
        }
        Schedule::Later {
            wake: self.wake_for(at),
        }
    }

    /// Makes `item` wait for `delay(&item)` from `now()`, to be added with `priority`, unless
    /// it is already waiting, in which case `delay` is not called.
    pub(crate) fn insert_unless_waiting(
        &mut self,
        item: T,
        priority: P,
        delay: impl FnOnce(&T) -> Duration,
        now: impl FnOnce() -> Instant,
    ) -> Schedule<T> {
        if self.closed {
            return Schedule::Closed;
        }
        let hash = short_hash(self.hasher.hash_one(&item));
        if self
            .table
            .find(table_hash(hash), |slot| {
                holds(&self.nodes, slot.index, &item)
            })
            .is_some()
        {
            return Schedule::AlreadyWaiting;
        }
        let delay = delay(&item);
        if delay.is_zero() {
            return Schedule::Now(item);
        }
        let at = self.tick(now().checked_add(delay).unwrap_or(self.instant(u64::MAX)));
        let seq = self.next_seq();
        let Some(index) = self.alloc(Node {
            item: Some(item),
            hash,
            seq,
            at,
            priority,
        }) else {
            tracing::error!("delaying queue is full; dropping an add_rate_limited");
            return Schedule::Later { wake: false };
        };
        self.table
            .insert_unique(table_hash(hash), Slot { index, hash }, Slot::table_hash);
        self.heap.push(Due { at, seq, index });
        Schedule::Later {
            wake: self.wake_for(at),
        }
    }

    /// For the timer task: `None` once closed; otherwise moves every item due now into `out`,
    /// and returns and records as the timer's state what `plan` decides (see [`Plan`]).
    pub(crate) fn take_due(&mut self, out: &mut Vec<(T, P)>, plan: &mut Plan<'_>) -> Option<Next> {
        if self.closed {
            return None;
        }
        let now = Instant::now();
        let at = self.pop_due(now, out);
        let next = plan(!out.is_empty(), at, now);
        // Adds that come after this point see the state and wake the task if needed.
        self.timer = next.timer_state();
        Some(next)
    }

    /// Moves every item due at `now` into `out`; returns the earliest remaining ready time.
    fn pop_due(&mut self, now: Instant, out: &mut Vec<(T, P)>) -> Option<Instant> {
        let now = self.tick(now);
        while let Some(&due) = self.heap.peek() {
            if due.at > now {
                break;
            }
            self.heap.pop();
            let Some(node) = self.nodes.get_mut(due.index as usize) else {
                continue;
            };
            if node.seq != due.seq {
                continue; // Stale: the item was moved earlier.
            }
            let Some(item) = node.item.take() else {
                continue;
            };
            if let Ok(entry) = self
                .table
                .find_entry(table_hash(node.hash), |slot| slot.index == due.index)
            {
                entry.remove();
            }
            self.free.push(due.index);
            out.push((item, node.priority));
        }
        if self.table.is_empty() {
            // Whatever is left in the heap is stale.
            self.reset();
            return None;
        }
        self.heap.peek().map(|due| self.instant(due.at))
    }

    /// Frees the slab once nothing waits, so that a burst does not pin its memory.
    fn reset(&mut self) {
        self.nodes.clear();
        self.free.clear();
        if self.nodes.capacity() > KEEP_CAPACITY {
            self.nodes.shrink_to(KEEP_CAPACITY);
            self.free.shrink_to(KEEP_CAPACITY);
            self.table.shrink_to(KEEP_CAPACITY, Slot::table_hash);
        }
        self.heap.clear();
        if self.heap.capacity() > KEEP_CAPACITY {
            self.heap.shrink_to(KEEP_CAPACITY);
        }
    }
}
