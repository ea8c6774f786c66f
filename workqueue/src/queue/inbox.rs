//! The inbox of a [`Queue`](crate::Queue): where an add that finds the queue's lock taken
//! leaves its item instead of waiting, for whoever holds the lock next to move into the store.
//!
//! This keeps a producer from queueing behind busy workers (and the workers from waiting on
//! it). A flag read without the inbox's lock tells the lock holders whether there is anything
//! to move, so an empty inbox costs them one atomic load.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::queue::lock::Mutex;

/// Items left by adds that found the queue busy, and whether there are any.
pub(crate) struct Inbox<T> {
    parked: Mutex<Parked<T>>,
    /// Whether `parked` holds items; read without its lock.
    pending: AtomicBool,
}

struct Parked<T> {
    items: Vec<T>,
    /// Set (under the queue's lock, after a last move) by shutdown: adds are dropped.
    closed: bool,
}

impl<T> Inbox<T> {
    /// An empty, open inbox.
    pub(crate) fn new() -> Self {
        Self {
            parked: Mutex::new(Parked {
                items: Vec::new(),
                closed: false,
            }),
            pending: AtomicBool::new(false),
        }
    }

    /// Whether items wait to be moved.
    #[inline]
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    /// Leaves `item` for the next holder of the queue's lock; dropped once the inbox is closed.
    ///
    /// Returns whether this call raised the pending flag: the caller must then wake a sleeping
    /// worker, if any. (When the flag was already up, and not lowered since, as moves happen
    /// under the inbox's lock, the add that raised it has already woken a sleeper or been seen
    /// by it.) A worker registers as sleeping before it looks at the flag one last time (both
    /// SeqCst), so either it sees the item or the caller sees it sleeping.
    pub(crate) fn leave(&self, item: T) -> bool {
        let mut parked = self.parked.lock();
        if parked.closed {
            return false;
        }
        parked.items.push(item);
        if self.pending.load(Ordering::Relaxed) {
            return false;
        }
        self.pending.store(true, Ordering::SeqCst);
        true
    }

    /// Swaps the inbox's items with the empty buffer `spare`, lowering the pending flag.
    pub(crate) fn take_into(&self, spare: &mut Vec<T>) {
        let mut parked = self.parked.lock();
        self.pending.store(false, Ordering::SeqCst);
        std::mem::swap(&mut parked.items, spare);
    }

    /// Closes the inbox: later adds are dropped. Items already left stay, to be taken.
    pub(crate) fn close(&self) {
        self.parked.lock().closed = true;
    }
}
