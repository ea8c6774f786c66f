//! The order in which a store (`store.rs`) hands out its queued items.
//!
//! The store keeps the rules every queue shares (dedup, exclusive processing, re-add during
//! processing); an [`Order`] only decides which queued item goes out next. [`Fifo`] is the plain
//! queue's order: first queued, first out. The priority queue's order, highest priority first
//! and first in, first out within one priority, is `ByPriority` in `priority/order.rs`.

use std::collections::VecDeque;

/// Which queued item a store hands out next.
///
/// The store calls [`push`](Order::push) when a node becomes queued, and again when a queued
/// node moves ahead (its priority rose): an order may then keep the node's earlier entry, as
/// long as [`is_live`](Order::is_live) tells it apart from the new one. [`pop`](Order::pop) may
/// therefore return entries that are no longer live; the store skips them.
pub(crate) trait Order: Default {
    /// What an add says about an item's place besides when it came: nothing for the plain
    /// queue, a priority for the priority queue. A higher value goes out first.
    type Priority: Copy + Ord + Default;
    /// What each node of the store keeps for the order.
    type Rank: Copy;
    /// A queued node, as the order keeps it.
    type Entry: Copy;

    /// The rank of a node first added with `priority`.
    fn rank(priority: Self::Priority) -> Self::Rank;

    /// The priority of a node with `rank`.
    fn priority(rank: &Self::Rank) -> Self::Priority;

    /// Gives a node with `rank` the priority `priority` (for its next [`push`](Order::push)).
    fn set_priority(rank: &mut Self::Rank, priority: Self::Priority);

    /// Queues node `index` behind every queued node of the same priority; an earlier entry of
    /// the node stops being live.
    fn push(&mut self, index: u32, rank: &mut Self::Rank);

    /// Removes and returns the entry that goes out next, live or not.
    fn pop(&mut self) -> Option<Self::Entry>;

    /// The node of `entry`.
    fn index(entry: Self::Entry) -> u32;

    /// Whether `entry` is the live entry of a node whose rank is `rank`.
    fn is_live(entry: Self::Entry, rank: &Self::Rank) -> bool;

    /// Forgets every entry (the store is empty).
    fn clear(&mut self);

    /// Releases buffers beyond `capacity` entries.
    fn shrink_to(&mut self, capacity: usize);
}

/// The plain queue's order: first queued, first out.
///
/// Ranks and priorities are `()`, so a node pays nothing for the priority queue's needs, and
/// every entry is live (a node is pushed only when it becomes queued).
#[derive(Default)]
pub(crate) struct Fifo(VecDeque<u32>);

impl Order for Fifo {
    type Priority = ();
    type Rank = ();
    type Entry = u32;

    #[inline]
    fn rank((): ()) {}

    #[inline]
    fn priority((): &()) {}

    #[inline]
    fn set_priority((): &mut (), (): ()) {}

    #[inline]
    fn push(&mut self, index: u32, (): &mut ()) {
        self.0.push_back(index);
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        self.0.pop_front()
    }

    #[inline]
    fn index(entry: u32) -> u32 {
        entry
    }

    #[inline]
    fn is_live(_: u32, (): &()) -> bool {
        true
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn shrink_to(&mut self, capacity: usize) {
        self.0.shrink_to(capacity);
    }
}
