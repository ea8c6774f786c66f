//! A relist applied page by page ([`Store::replace_in_pages`](indexer::Store::replace_in_pages)
//! on a [`DeltaFifo`]): the keys listed so far, and the fifo they are queued into.

use std::sync::Arc;

use hashbrown::HashSet;
use indexer::{ObjectKey, ReplaceInPages};
use kube::Resource;

use crate::DeltaFifo;

/// A paged replace in progress: each page is queued at once; the keys seen decide, at the end,
/// what is tombstoned.
pub(crate) struct PagedReplace<'a, K> {
    fifo: &'a DeltaFifo<K>,
    seen: HashSet<ObjectKey>,
}

impl<'a, K> PagedReplace<'a, K> {
    pub(crate) fn new(fifo: &'a DeltaFifo<K>) -> Self {
        Self {
            fifo,
            seen: HashSet::new(),
        }
    }
}

impl<K: Resource + Send + Sync> ReplaceInPages<K> for PagedReplace<'_, K> {
    fn page(&mut self, objects: Vec<Arc<K>>) -> Result<(), indexer::Error> {
        self.fifo.replace_page(objects, &mut self.seen)
    }

    fn finish(self: Box<Self>, _resource_version: String) -> Result<(), indexer::Error> {
        self.fifo.finish_paged_replace(&self.seen);
        Ok(())
    }
}
