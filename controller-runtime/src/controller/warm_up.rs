//! Warm replicas (controller-runtime's `WarmupRunnable`, kubernetes-sigs/controller-runtime#3192):
//! a controller built with [`warm_up(true)`](crate::controller::ControllerBuilder::warm_up), in
//! a manager that elects a leader, starts before its manager leads: the informers of the kinds it
//! watches, its external sources and its debouncer. Its handlers fill its queue meanwhile; only
//! its workers wait for leadership, so a replica that takes over reconciles at once, from warm
//! caches, without listing anything.

use std::sync::Arc;

use informer::{InformerFactory, Object, SharedIndexInformer};

/// Starts one informer through the manager's factory (the factory keeps running it and stops
/// it with the others).
pub(crate) struct InformerStart(Box<dyn Fn(&InformerFactory) + Send + Sync>);

impl InformerStart {
    /// The start of `informer`.
    pub(crate) fn of<K: Object>(informer: &Arc<SharedIndexInformer<K>>) -> Self {
        let informer = Arc::clone(informer);
        Self(Box::new(move |factory| {
            factory.start_informer(&informer);
        }))
    }

    /// Starts the informer unless it runs already.
    pub(crate) fn start(&self, factory: &InformerFactory) {
        (self.0)(factory);
    }
}
