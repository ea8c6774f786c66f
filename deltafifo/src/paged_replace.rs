//! A relist applied page by page ([`Store::replace_in_pages`](indexer::Store::replace_in_pages)
//! on a [`DeltaFifo`](crate::DeltaFifo)): each page is queued as it arrives, and the keys listed
//! so far decide, at the end, what is tombstoned.

use std::sync::Arc;

use hashbrown::HashSet;
use indexer::{ObjectKey, ObjectKeyRef, ReplaceInPages};
use kube::Resource;

use crate::options::DeltaFifoOptions;
use crate::queue_lock::QueueLock;
use crate::synced::SyncedVersion;

/// A paged replace in progress: each page is queued at once; the keys seen decide, at the end,
/// what is tombstoned.
pub(crate) struct PagedReplace<'a, K> {
    queue: &'a QueueLock<K>,
    options: &'a DeltaFifoOptions<K>,
    synced_version: &'a SyncedVersion,
    seen: HashSet<ObjectKey>,
}

impl<'a, K> PagedReplace<'a, K> {
    /// Starts a paged replace into the fifo whose queue, options and synced resource version
    /// these are.
    pub(crate) fn new(
        queue: &'a QueueLock<K>,
        options: &'a DeltaFifoOptions<K>,
        synced_version: &'a SyncedVersion,
    ) -> Self {
        Self {
            queue,
            options,
            synced_version,
            seen: HashSet::new(),
        }
    }
}

impl<K: Resource> PagedReplace<'_, K> {
    /// Queues one page as [`Store::replace`](indexer::Store::replace) queues its list, and adds
    /// the page's keys to `seen`. Fails, queueing nothing of the page, when an object has no key
    /// or its transform fails.
    fn replace_page(&mut self, objects: Vec<Arc<K>>) -> Result<(), indexer::Error> {
        let objects = self.options.prepare_listed(objects)?;
        let make = self.options.relisted();
        let mut processing = self.queue.lock_processing();
        let mut state = self.queue.lock();
        let initial = !state.populated;
        processing.initial_list_open |= initial;
        let mut queued_new_keys = false;
        for obj in objects {
            // Every key was validated above, so none of this fails part-way.
            let key = ObjectKeyRef::of(obj.as_ref())?;
            if !self.seen.contains(&key) {
                self.seen.insert(key.to_owned()?);
            }
            let hash = self.queue.hash_key(key);
            let new_key = state.enqueue(obj, hash, make)?;
            if new_key && initial {
                processing.initial_population_count += 1;
            }
            queued_new_keys |= new_key;
        }
        drop(processing);
        self.queue.unlock_and_wake(state, queued_new_keys);
        Ok(())
    }

    /// Ends the paged replace: a tombstone for every queued or known key that no page listed,
    /// exactly as [`Store::replace`](indexer::Store::replace) does at its end, and the list's
    /// resource version to be reached once the keys queued now are processed.
    fn finish_paged_replace(&self, resource_version: String) {
        let seen = &self.seen;
        let mut processing = self.queue.lock_processing();
        let mut state = self.queue.lock();
        state.tombstone_queued_unless(|deltas| seen.contains(deltas.key()));
        let tombstoned =
            state.tombstone_vanished_known(self.options.known(), |key| seen.contains(key));
        if !state.populated {
            state.populated = true;
            processing.initial_list_open = false;
            processing.initial_population_count += tombstoned;
            if processing.initial_population_count == 0 {
                self.queue.mark_synced();
            }
        }
        let reached = state.mark_resource_version(resource_version);
        let queued = state.len() > 0;
        drop(processing);
        self.queue.unlock_and_wake(state, queued);
        if let Some(resource_version) = reached {
            self.synced_version.set(resource_version);
        }
    }
}

impl<K: Resource + Send + Sync> ReplaceInPages<K> for PagedReplace<'_, K> {
    fn page(&mut self, objects: Vec<Arc<K>>) -> Result<(), indexer::Error> {
        self.replace_page(objects)
    }

    fn finish(self: Box<Self>, resource_version: String) -> Result<(), indexer::Error> {
        self.finish_paged_replace(resource_version);
        Ok(())
    }
}
