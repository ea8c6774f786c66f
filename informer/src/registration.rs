//! [`Registration`]: the handle of one handler added to an informer.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::watch;

use crate::listener::ListenerState;
use crate::wait::CacheSynced;

/// Returned by `add_event_handler`: tells when this handler has caught up with the informer's
/// initial state, and identifies the handler for `remove_event_handler`.
///
/// The handler has synced when the informer has synced **and** the handler has returned from
/// every initial-list add it was given (for a handler added to a running informer: the cache
/// snapshot it started with).
#[derive(Clone)]
pub struct Registration {
    pub(crate) informer_id: u64,
    pub(crate) listener_id: u64,
    pub(crate) listener: Arc<ListenerState>,
    pub(crate) informer_synced: watch::Receiver<bool>,
}

impl Registration {
    /// Whether the informer has synced and this handler has returned from every initial add.
    pub fn has_synced(&self) -> bool {
        *self.informer_synced.borrow() && self.listener.initial_adds_returned()
    }

    /// Waits until [`has_synced`](Self::has_synced) is true. Never completes if the informer
    /// stops (or is dropped) before it syncs; bound the wait with a timeout or a shutdown signal.
    pub async fn synced(&self) {
        let mut informer_synced = self.informer_synced.clone();
        if informer_synced.wait_for(|synced| *synced).await.is_err() {
            // The informer is gone without having synced: it never will.
            std::future::pending::<()>().await;
        }
        // Once the informer has synced, no more initial adds are given to this handler.
        self.listener.wait_initial_adds_returned().await;
    }

    /// The handler's name.
    pub fn handler_name(&self) -> &str {
        self.listener.name()
    }

    /// Notifications waiting for this handler (its buffer length).
    pub fn buffered(&self) -> usize {
        self.listener.buffered()
    }

    /// Whether the handler was removed (or its informer stopped).
    pub fn is_removed(&self) -> bool {
        self.listener.is_removed()
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("handler", &self.listener.name())
            .field("has_synced", &self.has_synced())
            .field("buffered", &self.buffered())
            .finish()
    }
}

impl CacheSynced for Registration {
    fn has_synced(&self) -> bool {
        Registration::has_synced(self)
    }

    fn wait_synced(&self) -> BoxFuture<'static, ()> {
        let registration = self.clone();
        Box::pin(async move { registration.synced().await })
    }
}
