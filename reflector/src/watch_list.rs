//! The streaming list (KEP-3157, client-go's `watchList`): one watch with `sendInitialEvents`
//! whose initial events replace the store's content at the initial-events-end bookmark, then
//! goes on as the steady-state watch.
//!
//! Two improvements over client-go: it starts from the last synced resource version (a
//! consistent snapshot "" only the first time or after a 410), and a server that ignores
//! `sendInitialEvents` makes the reflector fall back to a paginated list instead of retrying
//! forever. Such a server is recognised when, before the end bookmark, the stream ends, stays
//! silent for [`ReflectorOptions::initial_events_timeout`](crate::ReflectorOptions::initial_events_timeout),
//! or delivers what only a plain watch sends: a bookmark without the annotation, or a
//! MODIFIED or DELETED event.

use futures::StreamExt;
use indexer::{Indexer, Indexers, Store};
use kube::api::{WatchEvent, WatchParams};
use tokio::time::Instant;

use crate::reflector::RunState;
use crate::watch::Step;
use crate::{Error, Object, Reflector, WatchStream};

impl<K> Reflector<K>
where
    K: Object,
{
    /// Stream-lists into the store; returns the stream to continue as the watch. An error
    /// means "fall back to a paginated list".
    pub(crate) async fn watch_list(&self, state: &mut RunState) -> Result<WatchStream<K>, Error> {
        loop {
            let started = Instant::now();
            let resource_version = if state.rv_unavailable {
                String::new()
            } else {
                self.last_sync_resource_version()
            };
            let params = WatchParams {
                bookmarks: true,
                send_initial_events: true,
                timeout: Some(state.watch_timeout_secs(self.options.watch_timeout)),
                ..WatchParams::default()
            };
            let outcome = match self.lister_watcher.watch(&params, &resource_version).await {
                Ok(mut stream) => {
                    let buffer = Indexer::new(Indexers::new());
                    self.initial_events(&mut stream, &buffer)
                        .await
                        .map(|end_rv| (stream, buffer, end_rv))
                }
                Err(error) => Err(error),
            };
            match outcome {
                Ok((stream, buffer, end_rv)) => {
                    state.rv_unavailable = false;
                    let items = buffer.list();
                    let count = items.len();
                    self.replace_store(items, end_rv.clone())?;
                    tracing::debug!(
                        count,
                        resource_version = %end_rv,
                        requested = %resource_version,
                        duration = ?started.elapsed(),
                        "stream-listed"
                    );
                    self.set_last_sync_resource_version(end_rv);
                    return Ok(stream);
                }
                Err(error) if error.is_retriable_watch_error() => {
                    self.report(&error);
                    self.backoff(state).await;
                }
                Err(error)
                    if (error.is_expired() || error.is_too_large_resource_version())
                        && !state.rv_unavailable =>
                {
                    tracing::info!(%error, %resource_version, "cannot stream-list from the last synced resource version; asking for the latest state");
                    self.report_quietly(&error);
                    state.rv_unavailable = true;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Collects the initial events into `buffer` until the end bookmark; returns its RV.
    async fn initial_events(
        &self,
        stream: &mut WatchStream<K>,
        buffer: &dyn Store<K>,
    ) -> Result<String, Error> {
        let silence = self.options.initial_events_timeout;
        loop {
            let Ok(item) = tokio::time::timeout(silence, stream.next()).await else {
                return Err(Error::StreamingListIncomplete {
                    reason: "the server went silent before the initial-events-end bookmark",
                });
            };
            if let Some(Ok(WatchEvent::Modified(_) | WatchEvent::Deleted(_))) = &item {
                // Initial events are all ADDED: a change means the server is serving a plain
                // watch and will never send the end bookmark.
                return Err(Error::StreamingListIncomplete {
                    reason: "a MODIFIED or DELETED event arrived before the initial-events-end bookmark",
                });
            }
            match self.apply(buffer, item) {
                // Initial events are not ordered by resource version: only the end bookmark's
                // version is a safe point to resume from.
                Step::Applied { .. } => {}
                Step::Bookmark {
                    resource_version,
                    initial_events_end: true,
                } if !resource_version.is_empty() => return Ok(resource_version),
                Step::Bookmark { .. } => {
                    return Err(Error::StreamingListIncomplete {
                        reason: "a bookmark without the initial-events-end annotation arrived first",
                    });
                }
                Step::Closed => {
                    return Err(Error::StreamingListIncomplete {
                        reason: "the stream ended before the initial-events-end bookmark",
                    });
                }
                Step::Failed(error) => return Err(error),
            }
        }
    }
}
