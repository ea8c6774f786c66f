//! [`Intake`]: where a controller's watch events and external sources hand in the keys to
//! reconcile: straight to its queue, or through its [`Debouncer`] when it debounces. Requeues
//! after a reconcile and [`ControllerHandle::enqueue`](crate::controller::ControllerHandle::enqueue) go to
//! the queue directly.

use std::sync::Arc;

use indexer::ObjectKey;
use workqueue::Priority;

use crate::controller::debounce::Debouncer;
use crate::controller::enqueue::KeySink;
use crate::controller::staleness::Staleness;

/// The entry of event keys into a controller; cheap to clone.
#[derive(Clone)]
pub(crate) struct Intake {
    queue: KeySink,
    debouncer: Option<Arc<Debouncer>>,
    staleness: Arc<Staleness>,
}

impl Intake {
    /// Keys go to `queue`, through `debouncer` if given; informer progress goes to
    /// `staleness`.
    pub(crate) fn new(
        queue: KeySink,
        debouncer: Option<Arc<Debouncer>>,
        staleness: Arc<Staleness>,
    ) -> Self {
        Self {
            queue,
            debouncer,
            staleness,
        }
    }

    /// An informer the controller watches applied a change: keys skipped for a stale cache
    /// may go again.
    pub(crate) fn progressed(&self) {
        self.staleness.progressed();
    }

    /// An event asks for `key` to be reconciled, with `priority`.
    pub(crate) fn add(&self, key: ObjectKey, priority: Priority) {
        match &self.debouncer {
            Some(debouncer) => debouncer.push(key, priority),
            None => self.queue.add(key, priority),
        }
    }
}
