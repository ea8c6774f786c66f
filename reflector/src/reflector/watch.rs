//! One steady-state watch (client-go's `handleWatch`): opened from the last synced resource
//! version with bookmarks, its events applied to the store until it ends, the resync timer
//! ticking beside it. How it ended is the run loop's to act on (rewatch, back off, relist):
//! nothing here retries.

use std::time::Duration;

use futures::StreamExt;
use kube::api::WatchParams;
use tokio::time::Instant;

use super::apply::{Step, apply};
use super::shared::Shared;
use crate::{Error, Object, WatchStream};

/// A watch that ends within this time without any event is a failure (client-go's
/// `VeryShortWatchError`).
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// Extra silence tolerated past the longest watch timeout before a watch counts as stalled
/// (a half-open connection: HTTP/1.1 has no keep-alive pings).
const STALL_GRACE: Duration = Duration::from_secs(30);

/// How a watch ended.
pub(super) enum WatchEnd {
    /// Normal close (or a stall, or a connection broken while reading): rewatch from the last
    /// synced RV at once.
    Closed,
    /// A failure: the run loop rewatches after a backoff step if it is retriable, else relists.
    Failed(Error),
}

/// Calls `Store::resync` every period while an attempt lasts (never without a period). It
/// lives as long as one list-and-watch attempt, across its rewatches, as client-go's resync
/// goroutine does.
pub(super) struct ResyncTimer {
    period: Option<Duration>,
    next: Option<Instant>,
}

impl ResyncTimer {
    pub(super) fn new(period: Option<Duration>) -> Self {
        Self {
            period,
            next: period.and_then(|p| Instant::now().checked_add(p)),
        }
    }

    /// Completes when the next resync is due, and arms the one after it.
    async fn due(&mut self) {
        match (self.next, self.period) {
            (Some(next), Some(period)) => {
                tokio::time::sleep_until(next).await;
                self.next = Instant::now().checked_add(period);
            }
            _ => std::future::pending().await,
        }
    }
}

/// Opens a watch from the last synced resource version, with bookmarks and a server timeout of
/// `timeout_secs`.
pub(super) async fn open<K: Object>(
    shared: &Shared<K>,
    timeout_secs: u32,
) -> Result<WatchStream<K>, Error> {
    let resource_version = shared.last_sync_resource_version();
    let params = WatchParams {
        bookmarks: true,
        timeout: Some(timeout_secs),
        ..WatchParams::default()
    };
    let stream = shared
        .lister_watcher
        .watch_with_decoding(&params, &resource_version, shared.options.watch_decoding)
        .await?;
    tracing::debug!(%resource_version, timeout = ?params.timeout, "watch opened");
    Ok(stream)
}

/// Applies the events of one watch (opened at `started`) to the store until it ends; every
/// object event and bookmark with a resource version advances the last synced one.
pub(super) async fn handle<K: Object>(
    shared: &Shared<K>,
    mut stream: WatchStream<K>,
    resync: &mut ResyncTimer,
    started: Instant,
) -> WatchEnd {
    let stall_after = shared
        .options
        .watch_timeout
        .saturating_mul(2)
        .saturating_add(STALL_GRACE);
    let mut events = 0usize;
    loop {
        // A store whose consumer fell behind has the stream wait, rather than growing.
        if let Some(room) = shared.store.backpressure() {
            room.await;
        }
        let item = tokio::select! {
            item = tokio::time::timeout(stall_after, stream.next()) => item,
            () = resync.due() => {
                if !resync_is_due(shared) {
                    continue;
                }
                if let Err(source) = shared.store.resync() {
                    // Logged and reported by the run loop, which relists.
                    return WatchEnd::Failed(Error::Store { operation: "resync", source });
                }
                continue;
            }
        };
        let Ok(item) = item else {
            tracing::warn!(silent_for = ?stall_after, events, "watch stalled; rewatching");
            return WatchEnd::Closed;
        };
        match apply(shared, &*shared.store, item) {
            Step::Applied { resource_version } => {
                events += 1;
                if let Some(rv) = resource_version.filter(|rv| !rv.is_empty()) {
                    shared.set_last_sync_resource_version(rv);
                }
            }
            Step::Bookmark {
                resource_version, ..
            } => {
                events += 1;
                if !resource_version.is_empty() {
                    shared.set_last_sync_resource_version(resource_version);
                }
            }
            Step::Closed => {
                let elapsed = started.elapsed();
                if events == 0 && elapsed < VERY_SHORT_WATCH {
                    return WatchEnd::Failed(Error::VeryShortWatch { elapsed });
                }
                tracing::debug!(events, duration = ?elapsed, "watch closed; rewatching");
                return WatchEnd::Closed;
            }
            Step::Failed(error) => {
                tracing::debug!(events, %error, "watch ended by an error");
                return WatchEnd::Failed(error);
            }
        }
    }
}

/// Whether a tick of the resync timer resyncs: always, unless the options carry a gate.
fn resync_is_due<K>(shared: &Shared<K>) -> bool {
    shared
        .options
        .should_resync
        .as_ref()
        .is_none_or(|gate| gate())
}
