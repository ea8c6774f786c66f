//! The informers whose statistics the metrics export, type-erased ([`InformerStats`]) and
//! collected as the manager hands them out ([`InformerSet`]).

use std::sync::Arc;

use parking_lot::Mutex;

/// What the informer metrics read from one informer, type-erased.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) trait InformerStats: Send + Sync {
    fn name(&self) -> &str;
    fn cache_size(&self) -> usize;
    fn listener_buffers(&self) -> Vec<informer::ListenerBuffer>;
    fn last_sync_resource_version(&self) -> String;
    fn last_store_sync_resource_version(&self) -> String;
    fn lists(&self) -> u64;
    fn watches(&self) -> u64;
}

impl<K: informer::Object> InformerStats for informer::SharedIndexInformer<K> {
    fn name(&self) -> &str {
        informer::SharedIndexInformer::name(self)
    }
    fn cache_size(&self) -> usize {
        informer::SharedIndexInformer::cache_size(self)
    }
    fn listener_buffers(&self) -> Vec<informer::ListenerBuffer> {
        informer::SharedIndexInformer::listener_buffers(self)
    }
    fn last_sync_resource_version(&self) -> String {
        informer::SharedIndexInformer::last_sync_resource_version(self)
    }
    fn last_store_sync_resource_version(&self) -> String {
        informer::SharedIndexInformer::last_store_sync_resource_version(self)
    }
    fn lists(&self) -> u64 {
        informer::SharedIndexInformer::list_count(self)
    }
    fn watches(&self) -> u64 {
        informer::SharedIndexInformer::watch_count(self)
    }
}

/// The informers whose statistics are exported; filled as the manager hands out informers.
#[derive(Default, Clone)]
pub(crate) struct InformerSet {
    informers: Arc<Mutex<Vec<Arc<dyn InformerStats>>>>,
}

impl InformerSet {
    /// Adds `informer` unless it is already there (the factory shares informers).
    pub(crate) fn insert(&self, informer: Arc<dyn InformerStats>) {
        let mut informers = self.informers.lock();
        let address = Arc::as_ptr(&informer) as *const ();
        if !informers
            .iter()
            .any(|known| Arc::as_ptr(known) as *const () == address)
        {
            informers.push(informer);
        }
    }

    /// Drops `informer` (stopped: nothing to export any more).
    pub(crate) fn remove<K: informer::Object>(
        &self,
        informer: &Arc<informer::SharedIndexInformer<K>>,
    ) {
        let address = Arc::as_ptr(informer) as *const ();
        self.informers
            .lock()
            .retain(|known| Arc::as_ptr(known) as *const () != address);
    }

    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn snapshot(&self) -> Vec<Arc<dyn InformerStats>> {
        self.informers.lock().clone()
    }
}

impl std::fmt::Debug for InformerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InformerSet")
            .field("informers", &self.informers.lock().len())
            .finish()
    }
}
