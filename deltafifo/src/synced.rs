//! What a fifo's consumer has processed: [`SyncedFlag`], whether the initial state has been
//! delivered (readable without a lock and awaitable), and [`SyncedVersion`], the resource
//! version of the newest state processed.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;

/// Set once, when the fifo's initial list has been processed (or a write came before any list);
/// never goes back to false.
pub(crate) struct SyncedFlag {
    synced: AtomicBool,
    changed: Notify,
}

impl SyncedFlag {
    pub(crate) fn new() -> Self {
        Self {
            synced: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Waits until the flag is set.
    pub(crate) async fn wait(&self) {
        loop {
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            if self.is_set() {
                return;
            }
            changed.await;
        }
    }

    /// Sets the flag (once) and wakes those waiting for it.
    pub(crate) fn set(&self) {
        if !self.synced.load(Ordering::Acquire) && !self.synced.swap(true, Ordering::AcqRel) {
            self.changed.notify_waiters();
        }
    }
}

/// The resource version of the newest state a fifo's consumer is known to have processed.
#[derive(Default)]
pub(crate) struct SyncedVersion(Mutex<String>);

impl SyncedVersion {
    /// The resource version ("" before any).
    pub(crate) fn get(&self) -> String {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records that the consumer has processed the state at `resource_version`.
    pub(crate) fn set(&self, resource_version: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = resource_version;
    }

    /// Like [`set`](Self::set), copying into the text it holds (no allocation once it has
    /// room).
    pub(crate) fn set_str(&self, resource_version: &str) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.clear();
        held.push_str(resource_version);
    }
}
