//! [`ControllerHandle`]: what [`ControllerBuilder::build`](crate::controller::ControllerBuilder::build)
//! returns — the controller's name, its counters, and keys enqueued from anywhere.

use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use workqueue::Priority;

use crate::controller::enqueue::KeySink;
use crate::controller::stats::ControllerStats;

/// A built controller: its name, live counters, and a way to enqueue keys from anywhere.
#[derive(Clone)]
pub struct ControllerHandle {
    pub(super) name: String,
    pub(super) stats: Arc<ControllerStats>,
    pub(super) queue: KeySink,
}

impl std::fmt::Debug for ControllerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerHandle")
            .field("name", &self.name)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl ControllerHandle {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The controller's reconcile counters.
    pub fn stats(&self) -> &ControllerStats {
        &self.stats
    }

    /// Asks for `key` to be reconciled with `priority`, once `delay` has passed (at once if it
    /// is zero): for code outside the controller's watches (a cloud API's callback, a
    /// scheduler). The key goes straight to the queue, past predicates and the debouncer, and
    /// keeps the queue's rules: dedup (a waiting key keeps the higher priority and the earlier
    /// ready time), never two workers on one key, shutdown. Before the manager starts the key
    /// waits for the workers; after the controller stopped it is dropped. With the plain queue
    /// ([`ControllerBuilder::priority_queue`](crate::controller::ControllerBuilder::priority_queue)`(false)`)
    /// the priority is ignored.
    pub fn enqueue(&self, key: ObjectKey, priority: Priority, delay: Duration) {
        if delay.is_zero() {
            self.queue.add(key, priority);
        } else {
            self.queue.add_after(key, delay, priority);
        }
    }
}
