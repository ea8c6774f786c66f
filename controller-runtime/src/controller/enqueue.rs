//! [`Enqueue`]: where keys go into a controller's queue, whatever queue it runs — the priority
//! queue by default, or the plain rate-limiting queue, which ignores every priority as
//! controller-runtime's wrapper of a plain queue does.
//!
//! The workers drive the queue through workqueue's [`PriorityWorkQueue`] trait, monomorphised
//! for the queue the builder chose; the event handlers, the debouncer, the external sources and
//! the [`ControllerHandle`](crate::controller::ControllerHandle) only add keys, through this
//! object-safe view (one dynamic call per key, off the workers' get/done path), so they need
//! not know which queue it is.

use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use workqueue::{AddOptions, Priority, PriorityWorkQueue};

/// Adds keys to a controller's queue.
pub(crate) trait Enqueue: Send + Sync + 'static {
    /// Adds `key` now with `priority`.
    fn add(&self, key: ObjectKey, priority: Priority);

    /// Adds `key` with `priority` once `delay` has passed.
    fn add_after(&self, key: ObjectKey, delay: Duration, priority: Priority);
}

impl<Q: PriorityWorkQueue<Item = ObjectKey>> Enqueue for Q {
    fn add(&self, key: ObjectKey, priority: Priority) {
        self.add_with(key, AddOptions::new().priority(priority));
    }

    fn add_after(&self, key: ObjectKey, delay: Duration, priority: Priority) {
        self.add_with(key, AddOptions::new().priority(priority).after(delay));
    }
}

/// A controller's queue, as the parts that only add keys hold it; cheap to clone.
pub(crate) type KeySink = Arc<dyn Enqueue>;
