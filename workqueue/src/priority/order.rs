//! The priority queue's [`Order`]: highest priority first, first in, first out within one
//! priority.
//!
//! One FIFO of node indices per priority, kept in a short vector sorted from the highest
//! priority down: queues use few priorities (controller-runtime's two, usually), so finding a
//! priority's FIFO is a scan of a few entries and queueing or taking an item costs about what
//! the plain queue's single FIFO costs. When an item's priority rises while it is queued, it is
//! pushed again at the back of its new priority's FIFO and its old entry is left behind, stale:
//! each node counts its pushes (its generation) and each entry carries the generation it was
//! pushed with, so a stale entry is recognised and skipped when it comes out. An item's priority
//! only rises while it is queued, so stale entries never outnumber the queued items times the
//! priorities in use. The generation is 32 bits: a stale entry could pass for live only after its
//! node was pushed 2³² times while it waited, and the store hands out only queued nodes, so even
//! then an item would merely leave early, never twice.

use std::collections::VecDeque;

use crate::add_options::Priority;
use crate::queue::order::Order;

/// Past this many priorities in use, a new priority first drops the FIFOs that are empty.
const KEEP_IDLE_LEVELS: usize = 8;

/// The priority queue's order; see the module documentation.
#[derive(Default)]
pub(crate) struct ByPriority {
    /// One FIFO per priority, highest priority first.
    levels: Vec<Level>,
}

struct Level {
    priority: Priority,
    entries: VecDeque<Entry>,
}

/// What a node of the store keeps: its priority and how often it was pushed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rank {
    priority: Priority,
    generation: u32,
}

/// A queued node and the generation it was pushed with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    index: u32,
    generation: u32,
}

impl ByPriority {
    /// Starts the FIFO of `priority` with `first`.
    #[cold]
    fn insert_level(&mut self, priority: Priority, first: Entry) {
        if self.levels.len() >= KEEP_IDLE_LEVELS {
            self.levels.retain(|level| !level.entries.is_empty());
        }
        let at = self
            .levels
            .iter()
            .position(|level| level.priority < priority)
            .unwrap_or(self.levels.len());
        let mut entries = VecDeque::new();
        entries.push_back(first);
        self.levels.insert(at, Level { priority, entries });
    }
}

impl Order for ByPriority {
    type Priority = Priority;
    type Rank = Rank;
    type Entry = Entry;

    #[inline]
    fn rank(priority: Priority) -> Rank {
        Rank {
            priority,
            generation: 0,
        }
    }

    #[inline]
    fn priority(rank: &Rank) -> Priority {
        rank.priority
    }

    #[inline]
    fn set_priority(rank: &mut Rank, priority: Priority) {
        rank.priority = priority;
    }

    #[inline]
    fn push(&mut self, index: u32, rank: &mut Rank) {
        rank.generation = rank.generation.wrapping_add(1);
        let entry = Entry {
            index,
            generation: rank.generation,
        };
        match self
            .levels
            .iter_mut()
            .find(|level| level.priority == rank.priority)
        {
            Some(level) => level.entries.push_back(entry),
            None => self.insert_level(rank.priority, entry),
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        self.levels
            .iter_mut()
            .find_map(|level| level.entries.pop_front())
    }

    #[inline]
    fn index(entry: Entry) -> u32 {
        entry.index
    }

    #[inline]
    fn is_live(entry: Entry, rank: &Rank) -> bool {
        entry.generation == rank.generation
    }

    fn clear(&mut self) {
        for level in &mut self.levels {
            level.entries.clear();
        }
    }

    fn shrink_to(&mut self, capacity: usize) {
        self.levels.retain(|level| !level.entries.is_empty());
        for level in &mut self.levels {
            level.entries.shrink_to(capacity);
        }
    }
}
