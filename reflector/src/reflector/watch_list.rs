//! One streaming list (KEP-3157, client-go's `watchList`): a watch with `sendInitialEvents`
//! whose initial events are collected in a buffer and replace the store's content at the
//! initial-events-end bookmark; the same stream then goes on as the steady-state watch. Whether
//! to try one, from which resource version, and what to do when it fails are the run loop's
//! decisions: nothing here retries.
//!
//! A server that ignores `sendInitialEvents` is recognised when, before the end bookmark, the
//! stream ends, stays silent for
//! [`ReflectorOptions::initial_events_timeout`](crate::ReflectorOptions::initial_events_timeout),
//! or delivers what only a plain watch sends: a bookmark without the annotation, or a MODIFIED
//! or DELETED event. The last two are proof ([`shows_no_streaming_support`]); silence and an
//! early end may also be a slow server or a broken connection.

use futures::StreamExt;
use indexer::{Indexer, Indexers, Store};
use kube::api::{WatchEvent, WatchParams};
use tokio::time::Instant;

use super::apply::{Step, apply};
use super::shared::Shared;
use crate::{Error, Object, WatchStream};

/// The reason of a streaming list that received a change: a plain watch's event.
const CHANGE_FIRST: &str =
    "a MODIFIED or DELETED event arrived before the initial-events-end bookmark";
/// The reason of a streaming list that received a bookmark without the end annotation.
const PLAIN_BOOKMARK_FIRST: &str =
    "a bookmark without the initial-events-end annotation arrived first";

/// Stream-lists from `resource_version` ("" for a consistent read of the latest state) with a
/// server timeout of `timeout_secs`: replaces the store's content with the initial events and
/// sets the last synced resource version to the end bookmark's. Returns the stream to go on
/// watching from.
pub(super) async fn stream_list<K: Object>(
    shared: &Shared<K>,
    resource_version: &str,
    timeout_secs: u32,
) -> Result<WatchStream<K>, Error> {
    let started = Instant::now();
    let params = WatchParams {
        bookmarks: true,
        send_initial_events: true,
        timeout: Some(timeout_secs),
        ..WatchParams::default()
    };
    let mut stream = shared
        .lister_watcher
        .watch_with_decoding(&params, resource_version, shared.options.watch_decoding)
        .await?;
    let buffer = Indexer::new(Indexers::new());
    let end_rv = initial_events(shared, &mut stream, &buffer).await?;
    let items = buffer.list();
    // The buffer goes before the store takes the objects, so the store holds the only
    // reference to each: a transform (an informer stripping managedFields) edits it in place
    // instead of copying it, and nothing is left to free afterwards. Kept until later, the buffer
    // held the only reference to every decoded object when the store kept copies, and freeing
    // them (10 000 pods: a few hundred milliseconds) held back the first events on this
    // stream, which is already the steady-state watch.
    drop(buffer);
    let count = items.len();
    shared.replace_store(items, end_rv.clone())?;
    tracing::debug!(
        count,
        resource_version = %end_rv,
        requested = %resource_version,
        duration = ?started.elapsed(),
        "stream-listed"
    );
    shared.set_last_sync_resource_version(end_rv);
    Ok(stream)
}

/// Whether `error` (of [`stream_list`]) proves that the server does not serve streaming lists:
/// it refused the parameters (400 or 422, as a server with the WatchList feature off does), or
/// it answered with a plain watch. Not a timeout, a broken stream or any other failure, which a
/// server that supports streaming lists can also have.
pub(super) fn shows_no_streaming_support(error: &Error) -> bool {
    match error {
        Error::StreamingListIncomplete { reason } => {
            *reason == CHANGE_FIRST || *reason == PLAIN_BOOKMARK_FIRST
        }
        _ => matches!(error.code(), Some(400 | 422)),
    }
}

/// Collects the initial events into `buffer` until the end bookmark; returns its RV.
async fn initial_events<K: Object>(
    shared: &Shared<K>,
    stream: &mut WatchStream<K>,
    buffer: &dyn Store<K>,
) -> Result<String, Error> {
    let silence = shared.options.initial_events_timeout;
    loop {
        let Ok(item) = tokio::time::timeout(silence, stream.next()).await else {
            return Err(Error::StreamingListIncomplete {
                reason: "the server went silent before the initial-events-end bookmark",
            });
        };
        if let Some(Ok(WatchEvent::Modified(_) | WatchEvent::Deleted(_))) = &item {
            // Initial events are all ADDED: a change means the server is serving a plain watch
            // and will never send the end bookmark.
            return Err(Error::StreamingListIncomplete {
                reason: CHANGE_FIRST,
            });
        }
        match apply(shared, buffer, item) {
            // Initial events are not ordered by resource version: only the end bookmark's
            // version is a safe point to resume from.
            Step::Applied { .. } => {}
            Step::Bookmark {
                resource_version,
                initial_events_end: true,
            } if !resource_version.is_empty() => return Ok(resource_version),
            Step::Bookmark { .. } => {
                return Err(Error::StreamingListIncomplete {
                    reason: PLAIN_BOOKMARK_FIRST,
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
