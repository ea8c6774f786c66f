//! The storage behind a [`Queue`](crate::Queue) and the ready items of a
//! [`PriorityQueue`](crate::PriorityQueue): the queued items in their [`Order`] and client-go's
//! `dirty` and `processing` sets, held in one table so that each item is stored and hashed once.
//!
//! The rules every queue shares live here: an item waiting for a worker is stored once, an item
//! handed to a worker is not handed out again until its `done`, and an item added while it is
//! being processed is queued again at its `done`. The order (first in, first out for the plain
//! queue; by priority for the priority queue) only decides which queued item goes out next. An
//! add with a higher priority than the item's moves a queued item ahead (to the back of its new
//! priority) and raises the priority a re-added in-flight item will be queued with; an add never
//! lowers a priority.
//!
//! Items live in a slab of nodes; a `HashTable` of node indices (each with 32 bits of the
//! item's hash, so growing the table never re-hashes items nor reads the slab) finds an
//! item's node, and the order keeps node indices. A full `add` → `get` → `done`
//! cycle clones the item once (the copy handed to the worker) and hashes it once (in `add`)
//! when `done` comes for the item handed out last, as it does when one worker is busy; other
//! `done`s hash it a second time. Each node keeps its item's short hash, so that releasing it
//! never hashes the item.

use std::hash::{BuildHasher as _, Hash};
use std::time::Duration;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use tokio::time::Instant;

use crate::hash::{BuildHasher, Slot as TableSlot, short_hash, table_hash};
use crate::queue::order::{Fifo, Order};

/// Capacity kept when the store empties; larger buffers are released.
const KEEP_CAPACITY: usize = 1024;

/// Where an item is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Waiting in the order for a worker (client-go: dirty, not processing).
    Queued,
    /// Held by a worker (processing, not dirty).
    Processing,
    /// Held by a worker and added again meanwhile (processing and dirty): queued on `done`.
    ProcessingDirty,
}

struct Node<T, R> {
    /// `None` once the node is free.
    item: Option<T>,
    slot: Slot,
    /// 32 bits of the item's hash, to find the node's table entry without hashing again.
    hash: u32,
    /// What the order keeps for the node (nothing for the plain queue's FIFO).
    rank: R,
}

/// Timestamps kept only for queues with metrics.
struct Timing {
    /// Per node: the first add since the item was last handed out.
    added: Vec<Option<Instant>>,
    /// When each in-flight node was handed out (a small map: one entry per busy worker).
    started: std::collections::HashMap<u32, Instant, BuildHasher>,
}

/// What [`Store::add`] did; `P` is the order's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added<P> {
    /// Already waiting with this priority or a higher one (or the store is full): nothing
    /// changed.
    Ignored,
    /// Held by a worker: marked to be queued again on `done`.
    Dirty,
    /// Queued.
    Queued,
    /// Already waiting (queued, or marked to be queued on `done`) with a lower priority, the
    /// one given here: it now has the new priority.
    Raised(P),
}

/// What [`Store::done`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Done {
    /// The item was not held by a worker: nothing changed.
    Stray,
    /// Released.
    Released,
    /// Released and queued again (it was added while being processed).
    Requeued,
}

/// The queued and in-flight items of a queue; `O` orders the queued ones (the plain queue's
/// [`Fifo`] unless named).
pub(crate) struct Store<T, O: Order = Fifo> {
    /// Node indices of every queued or in-flight item.
    table: HashTable<TableSlot>,
    nodes: Vec<Node<T, O::Rank>>,
    free: Vec<u32>,
    /// The queued nodes, in the order they go out (possibly with stale entries, see [`Order`]).
    order: O,
    /// How many nodes are queued.
    queued: usize,
    hasher: BuildHasher,
    /// Timestamps, only when the queue has metrics.
    timing: Option<Timing>,
    /// The node handed out last ([`NO_NODE`] if none): `done` usually comes for it, and then
    /// finds it with one comparison instead of hashing the item.
    last_taken: u32,
}

/// No node index.
const NO_NODE: u32 = u32::MAX;

fn holds<T: Eq, R>(nodes: &[Node<T, R>], index: u32, item: &T) -> bool {
    nodes
        .get(index as usize)
        .and_then(|node| node.item.as_ref())
        .is_some_and(|held| held == item)
}

/// Gives a waiting node the priority `priority` if that is higher than its own; for a queued
/// node, that moves it to the back of the new priority's queued nodes.
#[inline]
fn raise<T, O: Order>(
    order: &mut O,
    node: &mut Node<T, O::Rank>,
    index: u32,
    priority: O::Priority,
) -> Added<O::Priority> {
    let current = O::priority(&node.rank);
    if priority <= current {
        return Added::Ignored;
    }
    O::set_priority(&mut node.rank, priority);
    if node.slot == Slot::Queued {
        order.push(index, &mut node.rank);
    }
    Added::Raised(current)
}

impl<T: Eq + Hash + Clone, O: Order> Store<T, O> {
    /// An empty store; `timed` keeps the timestamps that metrics need.
    pub(crate) fn new(timed: bool) -> Self {
        Self {
            table: HashTable::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            order: O::default(),
            queued: 0,
            hasher: BuildHasher::default(),
            timing: timed.then(|| Timing {
                added: Vec::new(),
                started: std::collections::HashMap::with_hasher(BuildHasher::default()),
            }),
            last_taken: NO_NODE,
        }
    }

    /// Marks `item` as needing processing, with `priority` (which only ever raises the
    /// priority of an item already waiting).
    pub(crate) fn add(&mut self, item: T, priority: O::Priority) -> Added<O::Priority> {
        let short = short_hash(self.hasher.hash_one(&item));
        let nodes = &mut self.nodes;
        let entry = self.table.entry(
            table_hash(short),
            |slot| holds(nodes, slot.index, &item),
            TableSlot::table_hash,
        );
        let (index, added) = match entry {
            Entry::Occupied(entry) => {
                let index = entry.get().index;
                let Some(node) = nodes.get_mut(index as usize) else {
                    return Added::Ignored;
                };
                if node.slot != Slot::Processing {
                    // Already waiting: at most a higher priority (the timestamp is kept).
                    return raise(&mut self.order, node, index, priority);
                }
                node.slot = Slot::ProcessingDirty;
                O::set_priority(&mut node.rank, priority);
                (index, Added::Dirty)
            }
            Entry::Vacant(entry) => {
                // Each arm writes the item straight into its node (no temporary to copy).
                let index = match self.free.pop() {
                    Some(index) => {
                        if let Some(free) = nodes.get_mut(index as usize) {
                            free.item = Some(item);
                            free.slot = Slot::Queued;
                            free.hash = short;
                            // The rank's generation goes on, so that stale entries stay stale.
                            O::set_priority(&mut free.rank, priority);
                            self.order.push(index, &mut free.rank);
                        }
                        index
                    }
                    None => {
                        let Ok(index) = u32::try_from(nodes.len()) else {
                            // Four billion items in one queue: refuse rather than corrupt.
                            tracing::error!("work queue is full; dropping an add");
                            return Added::Ignored;
                        };
                        let mut rank = O::rank(priority);
                        self.order.push(index, &mut rank);
                        nodes.push(Node {
                            item: Some(item),
                            slot: Slot::Queued,
                            hash: short,
                            rank,
                        });
                        if let Some(timing) = &mut self.timing {
                            timing.added.push(None);
                        }
                        index
                    }
                };
                entry.insert(TableSlot { index, hash: short });
                self.queued += 1;
                (index, Added::Queued)
            }
        };
        if let Some(added) = self
            .timing
            .as_mut()
            .and_then(|timing| timing.added.get_mut(index as usize))
        {
            added.get_or_insert_with(Instant::now);
        }
        added
    }

    /// If `item` waits for a worker (queued, or marked to be queued on `done`), gives it
    /// `priority` if that is higher and returns what changed; `None` if it does not wait.
    pub(crate) fn raise_if_waiting(
        &mut self,
        item: &T,
        priority: O::Priority,
    ) -> Option<Added<O::Priority>> {
        let index = self.find(item)?;
        let node = self.nodes.get_mut(index as usize)?;
        if node.slot == Slot::Processing {
            return None;
        }
        Some(raise(&mut self.order, node, index, priority))
    }

    /// Hands out the queued item that goes out first, with its priority; when timed, sets
    /// `queued_for` to how long it waited.
    pub(crate) fn take(&mut self, queued_for: &mut Option<Duration>) -> Option<(T, O::Priority)> {
        while let Some(entry) = self.order.pop() {
            let index = O::index(entry);
            let Some(node) = self.nodes.get_mut(index as usize) else {
                continue;
            };
            // Skip stale entries (see `Order`); only queued nodes go out.
            if node.item.is_none() || node.slot != Slot::Queued || !O::is_live(entry, &node.rank) {
                continue;
            }
            node.slot = Slot::Processing;
            self.queued -= 1;
            self.last_taken = index;
            if let Some(timing) = &mut self.timing {
                let now = Instant::now();
                timing.started.insert(index, now);
                let added = timing.added.get_mut(index as usize).and_then(Option::take);
                *queued_for = Some(now.saturating_duration_since(added.unwrap_or(now)));
            }
            return node
                .item
                .clone()
                .map(|item| (item, O::priority(&node.rank)));
        }
        None
    }

    /// Releases `item` from its worker, with how long it was held when timed.
    pub(crate) fn done(&mut self, item: &T) -> (Done, Option<Duration>) {
        let Some(index) = self.find(item) else {
            return (Done::Stray, None);
        };
        let Some(node) = self.nodes.get_mut(index as usize) else {
            return (Done::Stray, None);
        };
        let done = match node.slot {
            Slot::Queued => return (Done::Stray, None),
            Slot::Processing => {
                if let Ok(entry) = self
                    .table
                    .find_entry(table_hash(node.hash), |slot| slot.index == index)
                {
                    entry.remove();
                }
                node.item = None;
                self.free.push(index);
                Done::Released
            }
            Slot::ProcessingDirty => {
                node.slot = Slot::Queued;
                self.order.push(index, &mut node.rank);
                self.queued += 1;
                Done::Requeued
            }
        };
        let worked_for = self.timing.as_mut().map(|timing| {
            let now = Instant::now();
            let started = timing.started.remove(&index);
            now.saturating_duration_since(started.unwrap_or(now))
        });
        if self.table.is_empty() && self.nodes.len() > KEEP_CAPACITY {
            self.reset();
        }
        (done, worked_for)
    }

    /// The node holding `item`, if any: the last node handed out when it holds `item` (items
    /// are unique among nodes, so that is the node a lookup would find), else a lookup.
    fn find(&self, item: &T) -> Option<u32> {
        if holds(&self.nodes, self.last_taken, item) {
            return Some(self.last_taken);
        }
        let hash = table_hash(short_hash(self.hasher.hash_one(item)));
        self.table
            .find(hash, |slot| holds(&self.nodes, slot.index, item))
            .map(|slot| slot.index)
    }

    /// Frees the slab once nothing is stored after a burst, so that the burst does not pin
    /// its memory (small slabs are simply reused through the free list).
    fn reset(&mut self) {
        self.nodes.clear();
        self.free.clear();
        // Only stale entries can be left; the generations they carry restart with the nodes.
        self.order.clear();
        self.last_taken = NO_NODE;
        if let Some(timing) = &mut self.timing {
            timing.added.clear();
            timing.started.clear();
        }
        if self.nodes.capacity() > KEEP_CAPACITY {
            self.nodes.shrink_to(KEEP_CAPACITY);
            self.free.shrink_to(KEEP_CAPACITY);
            self.order.shrink_to(KEEP_CAPACITY);
            self.table.shrink_to(KEEP_CAPACITY, TableSlot::table_hash);
            if let Some(timing) = &mut self.timing {
                timing.added.shrink_to(KEEP_CAPACITY);
            }
        }
    }
}

impl<T, O: Order> Store<T, O> {
    /// Queued items (not counting items held by workers).
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// Queued and in-flight items.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether nothing is queued and nothing is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The sum of the ages of the in-flight items and the age of the oldest, at `now`.
    pub(crate) fn unfinished(&self, now: Instant) -> (Duration, Duration) {
        let mut total = Duration::ZERO;
        let mut longest = Duration::ZERO;
        for started in self
            .timing
            .iter()
            .flat_map(|timing| timing.started.values())
        {
            let age = now.saturating_duration_since(*started);
            total = total.saturating_add(age);
            longest = longest.max(age);
        }
        (total, longest)
    }

    /// Whether timestamps are kept (the queue has metrics).
    pub(crate) fn is_timed(&self) -> bool {
        self.timing.is_some()
    }
}
