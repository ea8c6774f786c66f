//! The steady-state watch (client-go's `watch` and `handleWatch`): open from the last synced
//! RV, apply events to the store, rewatch on a normal close, decide relist or rewatch on
//! failure, and run the resync timer.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use indexer::{ObjectKeyRef, Store};
use kube::api::{WatchEvent, WatchParams};
use tokio::time::Instant;

use crate::reflector::RunState;
use crate::{Error, Object, Reflector, WatchStream};

/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// A watch that ends within this time without any event is a failure (client-go's
/// `VeryShortWatchError`).
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// Extra silence tolerated past the longest watch timeout before a watch counts as stalled
/// (a half-open connection: HTTP/1.1 has no keep-alive pings).
const STALL_GRACE: Duration = Duration::from_secs(30);

/// What one item of a watch stream means for the loop reading it.
pub(crate) enum Step {
    /// An object event was applied (or skipped); `resource_version` is the object's.
    Applied { resource_version: Option<String> },
    /// A bookmark: no store change, only a resource version.
    Bookmark {
        resource_version: String,
        initial_events_end: bool,
    },
    /// The stream ended (cleanly, or its connection broke while reading).
    Closed,
    /// The server reported an error or the stream failed: the watch is over.
    Failed(Error),
}

/// The store write an object event asks for.
#[derive(Clone, Copy)]
enum Write {
    Add,
    Update,
    Delete,
}

impl Write {
    /// The watch event type, for messages.
    fn event(self) -> &'static str {
        match self {
            Write::Add => "ADDED",
            Write::Update => "MODIFIED",
            Write::Delete => "DELETED",
        }
    }

    /// The store operation, for messages.
    fn operation(self) -> &'static str {
        match self {
            Write::Add => "add",
            Write::Update => "update",
            Write::Delete => "delete",
        }
    }
}

/// How a steady-state watch ended.
enum WatchEnd {
    /// Normal close: rewatch from the last synced RV at once.
    Closed,
    /// A failure: rewatch after a backoff step if retriable, else relist.
    Failed(Error),
}

/// Calls `Store::resync` every period while the attempt lasts (never without a period).
struct ResyncTimer {
    period: Option<Duration>,
    next: Option<Instant>,
}

impl ResyncTimer {
    fn new(period: Option<Duration>) -> Self {
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

impl<K> Reflector<K>
where
    K: Object,
{
    /// Watches until a relist is needed and returns why. `stream` is a streaming list's
    /// stream to continue, if any.
    pub(crate) async fn watch(
        &self,
        state: &mut RunState,
        mut stream: Option<WatchStream<K>>,
    ) -> Error {
        let mut resync = ResyncTimer::new(self.options.resync_period);
        loop {
            let started = Instant::now();
            let stream = match stream.take() {
                Some(stream) => stream,
                None => {
                    let resource_version = self.last_sync_resource_version();
                    let params = WatchParams {
                        bookmarks: true,
                        timeout: Some(state.watch_timeout_secs(self.options.watch_timeout)),
                        ..WatchParams::default()
                    };
                    match self.lister_watcher.watch(&params, &resource_version).await {
                        Ok(stream) => {
                            tracing::debug!(%resource_version, timeout = ?params.timeout, "watch opened");
                            stream
                        }
                        Err(error) if error.is_retriable_watch_error() => {
                            self.report(&error);
                            self.backoff(state).await;
                            continue;
                        }
                        Err(error) => return error,
                    }
                }
            };
            match self.handle_watch(stream, &mut resync, started).await {
                WatchEnd::Closed => {}
                WatchEnd::Failed(error) if error.is_retriable_watch_error() => {
                    self.report(&error);
                    self.backoff(state).await;
                }
                WatchEnd::Failed(error) => return error,
            }
        }
    }

    /// Whether a tick of the resync timer resyncs: always, unless the options carry a gate.
    fn resync_is_due(&self) -> bool {
        self.options
            .should_resync
            .as_ref()
            .is_none_or(|gate| gate())
    }

    /// Applies the events of one watch to the store until it ends.
    async fn handle_watch(
        &self,
        mut stream: WatchStream<K>,
        resync: &mut ResyncTimer,
        started: Instant,
    ) -> WatchEnd {
        let stall_after = self
            .options
            .watch_timeout
            .saturating_mul(2)
            .saturating_add(STALL_GRACE);
        let mut events = 0usize;
        loop {
            // A store whose consumer fell behind has the stream wait, rather than growing.
            if let Some(room) = self.store.backpressure() {
                room.await;
            }
            let item = tokio::select! {
                item = tokio::time::timeout(stall_after, stream.next()) => item,
                () = resync.due() => {
                    if !self.resync_is_due() {
                        continue;
                    }
                    if let Err(source) = self.store.resync() {
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
            match self.apply(&*self.store, item) {
                Step::Applied { resource_version } => {
                    events += 1;
                    if let Some(rv) = resource_version.filter(|rv| !rv.is_empty()) {
                        self.set_last_sync_resource_version(rv);
                    }
                }
                Step::Bookmark {
                    resource_version, ..
                } => {
                    events += 1;
                    if !resource_version.is_empty() {
                        self.set_last_sync_resource_version(resource_version);
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

    /// Applies one item of a watch stream to `store` (the real store, or a streaming list's
    /// buffer) and says what it was.
    pub(crate) fn apply(
        &self,
        store: &dyn Store<K>,
        item: Option<Result<WatchEvent<K>, Error>>,
    ) -> Step {
        match item {
            None => Step::Closed,
            Some(Ok(WatchEvent::Added(obj))) => self.write(store, Write::Add, obj),
            Some(Ok(WatchEvent::Modified(obj))) => self.write(store, Write::Update, obj),
            Some(Ok(WatchEvent::Deleted(obj))) => self.write(store, Write::Delete, obj),
            Some(Ok(WatchEvent::Bookmark(bookmark))) => Step::Bookmark {
                initial_events_end: bookmark
                    .metadata
                    .annotations
                    .get(INITIAL_EVENTS_END_ANNOTATION)
                    .is_some_and(|v| v == "true"),
                resource_version: bookmark.metadata.resource_version,
            },
            Some(Ok(WatchEvent::Error(status))) => Step::Failed(Error::Status(status)),
            Some(Err(error)) if error.is_skippable_object() => {
                tracing::warn!(%error, "skipping a watch event");
                self.report_quietly(&error);
                Step::Applied {
                    resource_version: None,
                }
            }
            Some(Err(error)) if error.is_stream_read_error() => {
                tracing::debug!(%error, "watch connection broke");
                Step::Closed
            }
            Some(Err(error)) => Step::Failed(error),
        }
    }

    /// Writes one event's object: keyed once, wrapped in its `Arc` once. Objects without a
    /// usable key are skipped. A store error ends the watch: the relist that follows gives
    /// the store the whole state again, so a transient store failure heals.
    fn write(&self, store: &dyn Store<K>, write: Write, obj: K) -> Step {
        if let Err(source) = ObjectKeyRef::of(&obj).and_then(|key| key.validate()) {
            let error = Error::MissingMetadata {
                event: write.event(),
                source,
            };
            tracing::warn!(%error, "skipping a watch event");
            self.report_quietly(&error);
            return Step::Applied {
                resource_version: None,
            };
        }
        let resource_version = obj.meta().resource_version.clone();
        // A compact copy; the decoded original, with its slack, is freed here.
        let obj = Arc::new(if self.options.compact_objects {
            obj.clone()
        } else {
            obj
        });
        let result = match write {
            Write::Add => store.add(obj),
            Write::Update => store.update(obj),
            Write::Delete => store.delete(obj),
        };
        match result {
            Ok(()) => Step::Applied { resource_version },
            Err(source) => Step::Failed(Error::Store {
                operation: write.operation(),
                source,
            }),
        }
    }
}
