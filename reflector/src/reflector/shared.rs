//! What every part of a reflector uses: the lister-watcher, the store, the options, the last
//! synced resource version, and the reporting of failures. The list, the streaming list, the
//! watch and the run loop each take it by reference; it calls none of them.

use std::sync::Arc;

use indexer::Store;
use parking_lot::RwLock;

use crate::{Error, ListerWatcher, ReflectorOptions};

/// The parts of a [`Reflector`](crate::Reflector) that its list, streaming list, watch and run
/// loop share.
pub(super) struct Shared<K> {
    pub(super) lister_watcher: Arc<dyn ListerWatcher<K>>,
    pub(super) store: Arc<dyn Store<K>>,
    pub(super) options: ReflectorOptions,
    /// What is listed and watched, for logs and spans.
    pub(super) description: String,
    last_sync_rv: RwLock<String>,
}

impl<K: Clone> Shared<K> {
    pub(super) fn new(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn Store<K>>,
        options: ReflectorOptions,
    ) -> Self {
        Self {
            description: lister_watcher.describe(),
            lister_watcher,
            store,
            options,
            last_sync_rv: RwLock::new(String::new()),
        }
    }
}

impl<K> Shared<K> {
    /// The resource version of the last list, or of the last watch event or bookmark applied.
    pub(super) fn last_sync_resource_version(&self) -> String {
        self.last_sync_rv.read().clone()
    }

    pub(super) fn set_last_sync_resource_version(&self, resource_version: String) {
        *self.last_sync_rv.write() = resource_version;
    }

    /// Replaces the store's content with a complete list at `resource_version`.
    pub(super) fn replace_store(
        &self,
        items: Vec<Arc<K>>,
        resource_version: String,
    ) -> Result<(), Error> {
        self.store
            .replace(items, resource_version)
            .map_err(|source| Error::Store {
                operation: "replace",
                source,
            })
    }

    /// Logs a failure (expired resource versions are routine: info, the rest warn) and hands
    /// it to the error handler.
    pub(super) fn report(&self, error: &Error) {
        if error.is_expired() {
            tracing::info!(%error, "resource version expired; relisting");
        } else {
            tracing::warn!(%error, "reflector failure");
        }
        self.report_quietly(error);
    }

    /// Hands a failure that was already logged to the error handler.
    pub(super) fn report_quietly(&self, error: &Error) {
        if let Some(handler) = &self.options.error_handler {
            handler(error);
        }
    }
}
