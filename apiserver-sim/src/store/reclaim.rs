//! Events whose last reference a watcher would drop are handed back to the writer.
//!
//! Each write allocates a fresh object tree on the writing thread; the tree is freed when
//! the last event or store slot referencing it goes. Normally that is the history evicting
//! an old event, on the writer's own thread. A watcher that falls behind the history window
//! becomes the last owner instead, and freeing thousands of small allocations made by
//! another thread makes the allocator contend with the writer (glibc returns each chunk
//! to its arena under that arena's lock), which slows the writer and the watcher further.
//! So a watcher hands such events back, and the writer frees them between writes.

use std::sync::Arc;

use parking_lot::Mutex;

use super::history::Event;

/// Most events kept waiting for the writer; beyond that a watcher frees them itself (so an
/// idle writer never holds much memory).
const CAPACITY: usize = 4096;

/// Writes between two drains by the writer.
pub(crate) const DRAIN_EVERY: u64 = 64;

/// The queue of events handed back to the writer.
#[derive(Debug, Default)]
pub struct Reclaim {
    queue: Mutex<Vec<Arc<Event>>>,
}

impl Reclaim {
    /// Keeps `ev` in `local` if the caller holds its last reference.
    pub fn keep_if_last(local: &mut Vec<Arc<Event>>, ev: Arc<Event>) {
        if Arc::strong_count(&ev) == 1 {
            local.push(ev);
        }
    }

    /// Hands the events in `local` over to the writer (those that do not fit are freed
    /// here).
    pub fn give(&self, local: &mut Vec<Arc<Event>>) {
        if local.is_empty() {
            return;
        }
        let mut q = self.queue.lock();
        let room = CAPACITY.saturating_sub(q.len());
        let n = room.min(local.len());
        q.extend(local.drain(..n));
        drop(q);
        local.clear();
    }

    /// Frees what watchers handed back (called by the writer, between writes).
    pub fn drain(&self) {
        let Some(mut q) = self.queue.try_lock() else {
            return;
        };
        if q.is_empty() {
            return;
        }
        let events = std::mem::take(&mut *q);
        drop(q);
        drop(events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::EventType;
    use serde_json::json;

    fn ev() -> Arc<Event> {
        Arc::new(Event::new(1, EventType::Added, Arc::new(json!({})), None))
    }

    #[test]
    fn only_last_references_are_handed_back_and_bounded() {
        let r = Reclaim::default();
        let mut local = Vec::new();
        let shared = ev();
        Reclaim::keep_if_last(&mut local, shared.clone());
        assert!(local.is_empty(), "someone else still holds it");
        for _ in 0..CAPACITY + 10 {
            Reclaim::keep_if_last(&mut local, ev());
        }
        r.give(&mut local);
        assert!(local.is_empty());
        assert_eq!(r.queue.lock().len(), CAPACITY);
        r.drain();
        assert!(r.queue.lock().is_empty());
    }
}
