//! [`SyncPoints`]: where, in a [`DeltaFifo`](crate::DeltaFifo)'s queue, the consumer's cache
//! comes to reflect a known resource version.
//!
//! A delta fifo merges changes by key and hands keys out in order of their first change, so
//! after a pop the cache may hold some objects newer than others: it reflects one resource
//! version only at certain points. Those are kept here, by the sequence numbers of queued keys:
//!
//! - a bookmark or a relist at resource version `rv` is reached once every key queued when it
//!   arrived has been popped (their deltas hold every change before it, and maybe later ones);
//! - an add, update or delete is reached when the queue runs dry after the key it went to has
//!   been popped: then every change written so far has been processed. The newest one's
//!   resource version is read from the popped deltas, so a write costs nothing but a sequence
//!   number.
//!
//! A point never claims more than the cache holds: the resource version it yields is at most
//! that of the newest change processed.

use std::collections::VecDeque;

use kube::Resource;

use crate::delta::Deltas;

/// The pending points of one queue, guarded by its lock.
#[derive(Default)]
pub(crate) struct SyncPoints {
    /// Bookmarks and relists not reached yet: the sequence number the queue's head must pass,
    /// and the resource version, oldest first.
    marks: VecDeque<(u32, String)>,
    /// The sequence number of the key the newest add, update or delete went to, until popped.
    newest_change: Option<u32>,
    /// The resource version of the newest add, update or delete, once its key was popped.
    newest_changed: Option<String>,
}

/// Whether a head at sequence number `head` has passed `mark` (both wrap around).
fn passed(head: u32, mark: u32) -> bool {
    head.wrapping_sub(mark) as i32 >= 0
}

impl SyncPoints {
    /// An add, update or delete went to the key at sequence number `seq`.
    #[inline]
    pub(crate) fn changed(&mut self, seq: u32) {
        self.newest_change = Some(seq);
    }

    /// A bookmark or a relist at `resource_version`, reached once the head passes `tail` (the
    /// sequence number after the newest queued key). Every change before it is older.
    pub(crate) fn mark(&mut self, tail: u32, resource_version: String) {
        self.newest_change = None;
        self.newest_changed = None;
        self.marks.push_back((tail, resource_version));
    }

    /// Forgets the changes before a bookmark or relist that was reached at once (nothing was
    /// queued).
    pub(crate) fn reached_at_once(&mut self) {
        self.newest_change = None;
        self.newest_changed = None;
    }

    /// The key at sequence number `seq` was popped with `deltas`; the head is now at `head` and
    /// `drained` says whether the queue is empty. Returns the resource version the consumer's
    /// cache reflects once it has processed this key, if that is now known.
    pub(crate) fn popped<K: Resource>(
        &mut self,
        seq: u32,
        head: u32,
        deltas: &Deltas<K>,
        drained: bool,
    ) -> Option<String> {
        let mut reached = None;
        while self
            .marks
            .front()
            .is_some_and(|(mark, _)| passed(head, *mark))
        {
            reached = self
                .marks
                .pop_front()
                .map(|(_, resource_version)| resource_version);
        }
        if self.newest_change == Some(seq) {
            self.newest_change = None;
            self.newest_changed = deltas
                .newest()
                .object()
                .and_then(|obj| obj.meta().resource_version.clone())
                .filter(|rv| !rv.is_empty());
        }
        if drained && self.newest_change.is_none() && self.marks.is_empty() {
            reached = self.newest_changed.take().or(reached);
        }
        reached
    }
}
