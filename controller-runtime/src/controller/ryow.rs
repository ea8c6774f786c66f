//! Read-your-own-writes: a controller remembers the `resourceVersion` its reconciler's own
//! writes returned, and the next reconcile of that key waits (bounded) until the cache has
//! caught up with it.
//!
//! The guarantee: when a reconcile of key `k` starts, the cached primary object of `k` is at
//! least as new as every write made to it through [`Context`](crate::controller::Context)'s write methods
//! in earlier reconciles of this controller — or the wait timed out (logged as a warning), or
//! the cache saw the object deleted. Resource versions are compared as integers, as KEP-5647
//! allows; a version that is not an integer is only considered caught up once it is seen
//! exactly. Writes made with a plain `kube::Api` are not tracked.

use std::collections::HashMap;
use std::time::Duration;

use indexer::ObjectKey;
use parking_lot::Mutex;
use tokio::sync::Notify;

/// The default bound on the wait for the cache to catch up.
pub const DEFAULT_READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(5);

/// Resource versions written per key, and a signal the controller's event handler raises on
/// every cache change of the primary type.
#[derive(Debug, Default)]
pub(crate) struct WriteTracker {
    written: Mutex<HashMap<ObjectKey, String>>,
    changed: Notify,
}

/// Whether a cached resource version is at least `written`.
fn caught_up(cached: &str, written: &str) -> bool {
    match (cached.parse::<u64>(), written.parse::<u64>()) {
        (Ok(cached), Ok(written)) => cached >= written,
        _ => cached == written,
    }
}

impl WriteTracker {
    /// Records that a write to `key` returned `resource_version`.
    pub(crate) fn record(&self, key: &ObjectKey, resource_version: Option<&str>) {
        let Some(resource_version) = resource_version else {
            return;
        };
        let mut written = self.written.lock();
        let newer = written
            .get(key)
            .is_none_or(|previous| !caught_up(previous, resource_version));
        if newer {
            written.insert(key.clone(), resource_version.to_owned());
        }
    }

    /// The cache changed: wake every waiter.
    pub(crate) fn cache_changed(&self) {
        self.changed.notify_waiters();
    }

    /// Waits until the cached object (`lookup()`, `None` if it is not cached; `version` reads
    /// its resource version) has caught up with the last write to `key`, or the object's
    /// deletion was seen ([`forget`](Self::forget)), for at most `timeout`; returns the object
    /// of the last lookup, so the caller looks the object up no more than this did. With no
    /// write pending (the common case) that is one lookup.
    ///
    /// (The informer's last synced resource version is not used: it is the reflector's, and runs
    /// ahead of the cache while the fifo drains.)
    pub(crate) async fn wait<T>(
        &self,
        key: &ObjectKey,
        timeout: Duration,
        lookup: impl Fn() -> Option<T>,
        version: impl Fn(&T) -> Option<&str>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let written = self.written.lock().get(key).cloned();
            let cached = lookup();
            let Some(written) = written else {
                return cached;
            };
            let current = cached.as_ref().and_then(&version);
            if current.is_some_and(|current| caught_up(current, &written)) {
                self.forget_if(key, &written);
                return cached;
            }
            drop(cached);
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                tracing::warn!(
                    %key,
                    resource_version = %written,
                    ?timeout,
                    "cache did not catch up with this controller's last write in time; reconciling anyway"
                );
                self.forget_if(key, &written);
                return lookup();
            }
        }
    }

    /// Drops the record of `key` if it is still `written`.
    fn forget_if(&self, key: &ObjectKey, written: &str) {
        let mut map = self.written.lock();
        if map.get(key).is_some_and(|current| current == written) {
            map.remove(key);
        }
    }

    /// Drops the record of `key` (the object is gone).
    pub(crate) fn forget(&self, key: &ObjectKey) {
        self.written.lock().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn compares_versions_numerically() {
        assert!(caught_up("10", "9"));
        assert!(!caught_up("9", "10"));
        assert!(caught_up("abc", "abc"));
        assert!(!caught_up("abd", "abc"));
    }

    /// The resource version of a cached "object" that is its version.
    fn version(value: &Arc<str>) -> Option<&str> {
        Some(value)
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_the_cache_and_gives_up_after_the_timeout() {
        let tracker = Arc::new(WriteTracker::default());
        let key = ObjectKey::namespaced("ns", "a").unwrap();
        // Nothing written: no wait, and the one lookup is handed back.
        let found = tracker
            .wait(
                &key,
                Duration::from_secs(5),
                || Some(Arc::from("1")),
                version,
            )
            .await;
        assert_eq!(found.as_deref(), Some("1"));

        tracker.record(&key, Some("7"));
        tracker.record(&key, Some("5"));
        let cached = Arc::new(Mutex::new("6".to_string()));
        let waiter = {
            let (tracker, key, cached) = (tracker.clone(), key.clone(), cached.clone());
            tokio::spawn(async move {
                let read = cached.clone();
                tracker
                    .wait(
                        &key,
                        Duration::from_secs(5),
                        move || Some(Arc::from(read.lock().as_str())),
                        version,
                    )
                    .await
            })
        };
        tokio::task::yield_now().await;
        *cached.lock() = "7".into();
        tracker.cache_changed();
        assert_eq!(waiter.await.unwrap().as_deref(), Some("7"));
        assert!(tracker.written.lock().is_empty());

        // A cache that never catches up: the wait ends at the deadline.
        tracker.record(&key, Some("9"));
        let start = tokio::time::Instant::now();
        let found = tracker
            .wait(
                &key,
                Duration::from_secs(5),
                || Some(Arc::from("8")),
                version,
            )
            .await;
        assert_eq!(
            found.as_deref(),
            Some("8"),
            "looked up again at the deadline"
        );
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        assert!(tracker.written.lock().is_empty());

        // A deletion seen by the handler ends the wait.
        tracker.record(&key, Some("10"));
        tracker.forget(&key);
        let gone = tracker
            .wait(&key, Duration::from_secs(5), || None::<Arc<str>>, version)
            .await;
        assert_eq!(gone, None);
    }
}
