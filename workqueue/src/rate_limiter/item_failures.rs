//! The per-item failure counts that the per-item limiters ([`ItemExponentialFailure`],
//! [`ItemFastSlow`]) keep: recorded by `when`, cleared by `forget`, read by `num_requeues`.
//!
//! [`ItemExponentialFailure`]: super::ItemExponentialFailure
//! [`ItemFastSlow`]: super::ItemFastSlow

use std::hash::Hash;

use parking_lot::Mutex;

use crate::rate_limiter::item_map::ItemMap;

/// How many times each item has failed since it was last forgotten.
pub(crate) struct ItemFailures<T> {
    counts: Mutex<ItemMap<T, usize>>,
}

impl<T> ItemFailures<T> {
    /// No failures recorded.
    pub(crate) fn new() -> Self {
        Self {
            counts: Mutex::new(ItemMap::new()),
        }
    }

    /// How many items have failures recorded.
    pub(crate) fn len(&self) -> usize {
        self.counts.lock().len()
    }
}

impl<T: Eq + Hash + Clone> ItemFailures<T> {
    /// Records a failure of `item`; returns how many failures of it were recorded before this
    /// one. The count saturates.
    pub(crate) fn record(&self, item: &T) -> usize {
        let mut counts = self.counts.lock();
        let count = counts.get_or_insert_with(item, || 0);
        let earlier = *count;
        *count = earlier.saturating_add(1);
        earlier
    }

    /// Clears the failures of `item`.
    pub(crate) fn forget(&self, item: &T) {
        self.counts.lock().remove(item);
    }

    /// How many failures of `item` are recorded.
    pub(crate) fn count(&self, item: &T) -> usize {
        self.counts.lock().get(item).copied().unwrap_or(0)
    }
}
