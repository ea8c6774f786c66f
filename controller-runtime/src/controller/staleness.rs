//! Staleness mitigation, as Kubernetes 1.36's controllers do it (KEP-5647): a controller
//! remembers, per key it reconciles, the highest `resourceVersion` its own writes returned
//! through each informer it watches, and a reconcile of that key starts only once every such
//! informer's cache has synced past it (the informer's
//! [`last_store_sync_resource_version`](informer::SharedIndexInformer::last_store_sync_resource_version),
//! watch bookmarks included). A key whose cache is older is *skipped*: not reconciled, and put
//! back in the queue when one of the controller's informers next reports progress, or after a
//! short backoff (10 ms, doubling up to 1 s), whichever comes first.
//!
//! Versions are compared as apimachinery's `CompareResourceVersion` compares them (the
//! `resource_version` module): positive integers without leading zeros, of any length. A version
//! that is not comparable is refused gracefully: a write that returned one records nothing, and
//! a claim on an informer whose version is not comparable is dropped, so the key is reconciled
//! as it would be without staleness mitigation (logged at debug level). The deletion of the
//! reconciled object ends its key's claims. A key skipped for longer than the controller's
//! [`read_your_writes_timeout`](crate::controller::ControllerBuilder::read_your_writes_timeout)
//! is reconciled anyway (logged as a warning): a write that its informer can never see (outside
//! the cached namespaces or selectors, on a server that sends no bookmarks) must not stall its key
//! for good.

use std::cmp::Ordering as Order;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use indexer::ObjectKey;
use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;
use workqueue::Priority;

use crate::cache::KindKey;
use crate::controller::enqueue::KeySink;
use crate::controller::resource_version::{NotComparable, compare, distance};
use crate::ops::metrics::ReportsStaleness;

/// The default bound on how long a key's reconciles are skipped while the cache has not caught
/// up with the controller's own writes.
pub const DEFAULT_READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(5);

/// The first retry of a skipped key that no informer progress woke sooner.
const FIRST_RETRY: Duration = Duration::from_millis(10);
/// The longest retry delay of a skipped key.
const MAX_RETRY: Duration = Duration::from_secs(1);

/// One informer the controller watches, as staleness sees it.
pub(crate) struct WatchedInformer {
    /// The cache it belongs to (its kind, and whether it holds metadata only).
    pub(crate) kind: KindKey,
    /// Its name, for logs and metrics.
    pub(crate) name: String,
    /// The namespace it caches; `None` for all namespaces or a cluster-scoped kind.
    pub(crate) namespace: Option<String>,
    /// Its last store sync resource version ("" before its first list was applied).
    pub(crate) version: Box<dyn Fn() -> String + Send + Sync>,
}

/// The highest version written through one informer that a key's reconciles wait for.
struct Claim {
    informer: usize,
    written: String,
}

/// What one key waits for.
#[derive(Default)]
struct Pending {
    claims: Vec<Claim>,
    /// When its first reconcile was skipped (the timeout counts from there).
    skipped_since: Option<Instant>,
    /// Skips in a row, for the retry backoff.
    skips: u32,
    /// Skipped and not queued again yet: the priority to queue it with.
    parked: Option<Priority>,
}

/// Whether a reconcile of a key may start now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// Every informer the key's earlier reconciles wrote through has caught up (or none did).
    Fresh,
    /// An informer has not caught up: skip the reconcile.
    Stale {
        /// The informer behind.
        informer: String,
        /// The version written through it.
        written: String,
        /// The version its cache reflects.
        cached: String,
    },
    /// Still behind after the timeout: reconcile anyway (the claims are dropped).
    GaveUp,
}

/// A controller's record of its own writes and of the keys skipped for them.
pub(crate) struct Staleness {
    informers: RwLock<Vec<WatchedInformer>>,
    pending: Mutex<HashMap<ObjectKey, Pending>>,
    /// How many keys are parked (read without the lock on every informer event).
    parked: AtomicUsize,
    timeout: Duration,
    queue: KeySink,
}

/// Whether a cache at `cached` is older than `written` (`false` when the two cannot be
/// compared: then there is nothing to wait for).
pub(crate) fn behind(cached: &str, written: &str) -> bool {
    matches!(compare(cached, written), Ok(Order::Less))
}

impl Staleness {
    /// A record whose skipped keys go back to `queue`, reconciled anyway after `timeout`.
    pub(crate) fn new(timeout: Duration, queue: KeySink) -> Self {
        Self {
            informers: RwLock::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            parked: AtomicUsize::new(0),
            timeout,
            queue,
        }
    }

    /// Adds the informers of one watch (an informer two watches share is kept once).
    pub(crate) fn watch(&self, informers: impl IntoIterator<Item = WatchedInformer>) {
        let mut known = self.informers.write();
        for informer in informers {
            if !known.iter().any(|other| other.name == informer.name) {
                known.push(informer);
            }
        }
    }

    /// A reconcile of `key` wrote an object of `kind` in `namespace` (`None`: cluster-scoped)
    /// and got back `resource_version`: the key's next reconcile waits until every informer of
    /// that kind this controller watches, which caches that namespace, has synced past it.
    /// Nothing is recorded for a kind the controller does not watch, or without a version.
    pub(crate) fn record(
        &self,
        key: &ObjectKey,
        kind: &KindKey,
        namespace: Option<&str>,
        resource_version: Option<&str>,
    ) {
        let Some(written) = resource_version else {
            return;
        };
        if let Err(NotComparable(version)) = compare(written, written) {
            tracing::debug!(%key, %version, "written resource version not comparable; the key's next reconcile does not wait for it");
            return;
        }
        let informers = self.informers.read();
        let covering = informers.iter().enumerate().filter(|(_, informer)| {
            informer.kind.kind == kind.kind
                && informer
                    .namespace
                    .as_deref()
                    .is_none_or(|cached| Some(cached) == namespace)
        });
        let mut pending = self.pending.lock();
        for (index, _) in covering {
            let claims = &mut pending.entry(key.clone()).or_default().claims;
            match claims.iter_mut().find(|claim| claim.informer == index) {
                Some(claim) if !behind(&claim.written, written) => {}
                Some(claim) => claim.written = written.to_owned(),
                None => claims.push(Claim {
                    informer: index,
                    written: written.to_owned(),
                }),
            }
        }
    }

    /// Whether a reconcile of `key` may start now; drops the claims its informers caught up
    /// with (all of them once it is fresh, or once it gave up).
    pub(crate) fn check(&self, key: &ObjectKey) -> Freshness {
        let mut pending = self.pending.lock();
        let Some(entry) = pending.get_mut(key) else {
            return Freshness::Fresh;
        };
        let informers = self.informers.read();
        let version = |claim: &Claim| {
            informers
                .get(claim.informer)
                .map(|informer| (informer.version)())
        };
        entry.claims.retain(|claim| {
            let Some(cached) = version(claim) else {
                return false;
            };
            match compare(&cached, &claim.written) {
                Ok(order) => order == Order::Less,
                Err(NotComparable(version)) => {
                    tracing::debug!(%key, %version, "cached resource version not comparable; not waiting for it");
                    false
                }
            }
        });
        let Some((behind, written)) = entry
            .claims
            .first()
            .map(|claim| (claim.informer, claim.written.clone()))
        else {
            self.unpark(entry);
            pending.remove(key);
            return Freshness::Fresh;
        };
        let (informer, cached) = informers
            .get(behind)
            .map(|informer| (informer.name.clone(), (informer.version)()))
            .unwrap_or_default();
        let now = Instant::now();
        let since = *entry.skipped_since.get_or_insert(now);
        if now.duration_since(since) >= self.timeout {
            tracing::warn!(
                %key,
                %informer,
                %written,
                %cached,
                timeout = ?self.timeout,
                "cache did not catch up with this controller's own write in time; reconciling anyway"
            );
            self.unpark(entry);
            pending.remove(key);
            return Freshness::GaveUp;
        }
        Freshness::Stale {
            informer,
            written,
            cached,
        }
    }

    /// `key` was skipped: parks it with `priority` until informer progress or the returned
    /// delay (the key's backoff, never past its timeout) puts it back in the queue.
    pub(crate) fn park(&self, key: &ObjectKey, priority: Priority) -> Duration {
        let mut pending = self.pending.lock();
        let Some(entry) = pending.get_mut(key) else {
            // Cleared meanwhile (the object was deleted): its delete event queued it.
            return Duration::ZERO;
        };
        if entry.parked.replace(priority).is_none() {
            self.parked.fetch_add(1, Ordering::Relaxed);
        }
        let backoff = FIRST_RETRY
            .saturating_mul(1 << entry.skips.min(16))
            .min(MAX_RETRY);
        entry.skips = entry.skips.saturating_add(1);
        let left = entry
            .skipped_since
            .map(|since| self.timeout.saturating_sub(since.elapsed()))
            .unwrap_or(self.timeout);
        backoff.min(left)
    }

    /// Puts `key` back in the queue if it is still parked (its retry delay passed).
    pub(crate) fn retry(&self, key: &ObjectKey) {
        let priority = {
            let mut pending = self.pending.lock();
            pending.get_mut(key).and_then(|entry| self.unpark(entry))
        };
        if let Some(priority) = priority {
            self.queue.add(key.clone(), priority);
        }
    }

    /// An informer this controller watches applied a change: puts back in the queue every
    /// parked key whose informers have all caught up. Free while nothing is parked.
    pub(crate) fn progressed(&self) {
        if self.parked.load(Ordering::Relaxed) == 0 {
            return;
        }
        let ready: Vec<(ObjectKey, Priority)> = {
            let mut pending = self.pending.lock();
            let informers = self.informers.read();
            pending
                .iter_mut()
                .filter(|(_, entry)| entry.parked.is_some())
                .filter(|(_, entry)| {
                    entry.claims.iter().all(|claim| {
                        informers
                            .get(claim.informer)
                            .is_none_or(|informer| !behind(&(informer.version)(), &claim.written))
                    })
                })
                .filter_map(|(key, entry)| Some((key.clone(), self.unpark(entry)?)))
                .collect()
        };
        for (key, priority) in ready {
            self.queue.add(key, priority);
        }
    }

    /// The reconciled object of `key` is gone: its claims end.
    pub(crate) fn forget(&self, key: &ObjectKey) {
        let mut pending = self.pending.lock();
        if let Some(mut entry) = pending.remove(key) {
            self.unpark(&mut entry);
        }
    }

    /// Takes `entry` out of the parked keys; the priority it was parked with, if it was.
    fn unpark(&self, entry: &mut Pending) -> Option<Priority> {
        let priority = entry.parked.take()?;
        self.parked.fetch_sub(1, Ordering::Relaxed);
        Some(priority)
    }
}

impl ReportsStaleness for Staleness {
    fn lag(&self) -> Vec<(String, u64)> {
        let informers = self.informers.read();
        let mut lag: Vec<(String, u64)> = informers
            .iter()
            .map(|informer| (informer.name.clone(), 0))
            .collect();
        let pending = self.pending.lock();
        for claim in pending.values().flat_map(|entry| &entry.claims) {
            let Some(informer) = informers.get(claim.informer) else {
                continue;
            };
            let behind = distance(&(informer.version)(), &claim.written).unwrap_or(0);
            if let Some((_, most)) = lag.get_mut(claim.informer) {
                *most = (*most).max(behind);
            }
        }
        lag
    }
}

/// Puts `key` back in the queue after `delay` unless informer progress did it first.
pub(crate) fn schedule_retry(staleness: &Arc<Staleness>, key: ObjectKey, delay: Duration) {
    let staleness = Arc::clone(staleness);
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        staleness.retry(&key);
    });
}

#[cfg(test)]
#[path = "staleness_tests.rs"]
mod tests;
