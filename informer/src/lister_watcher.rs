//! [`Observed`]: the informer's wrapper around its lister-watcher. It counts list and watch
//! requests (for metrics), and hands each bookmark of a watch to the informer's fifo at the
//! point of the stream where it arrived, so that the fifo knows when its consumer has caught up
//! with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use futures::StreamExt;
use reflector::{INITIAL_EVENTS_END_ANNOTATION, ListerWatcher, WatchEvent, WatchStream};

use crate::Object;

/// How many list and watch requests an informer's reflector made (for metrics).
#[derive(Debug, Default)]
pub(crate) struct RequestCounts {
    pub(crate) lists: AtomicU64,
    pub(crate) watches: AtomicU64,
}

/// Where bookmarks go: the fifo's `bookmark`, once the informer runs.
#[derive(Default)]
pub(crate) struct BookmarkSink(OnceLock<Box<dyn Fn(String) + Send + Sync>>);

impl BookmarkSink {
    /// Sends every later bookmark to `sink` (the first connection stays).
    pub(crate) fn connect(&self, sink: impl Fn(String) + Send + Sync + 'static) {
        let _ = self.0.set(Box::new(sink));
    }

    fn send(&self, resource_version: String) {
        if let Some(sink) = self.0.get() {
            sink(resource_version);
        }
    }
}

/// Counts the requests of the lister-watcher it wraps, and forwards its watches' bookmarks.
pub(crate) struct Observed<K: Clone> {
    pub(crate) inner: Arc<dyn ListerWatcher<K>>,
    pub(crate) counts: Arc<RequestCounts>,
    pub(crate) bookmarks: Arc<BookmarkSink>,
}

/// Hands `stream`'s bookmarks to `sink` as the reader reaches them: by then the reader (the
/// reflector) has written every event before them. A streaming list's
/// (`initial_events`) bookmarks are held back until its initial-events-end bookmark, which is
/// not forwarded either: the reflector replaces the store at that version itself.
fn forward_bookmarks<K: Object>(
    stream: WatchStream<K>,
    sink: Arc<BookmarkSink>,
    initial_events: bool,
) -> WatchStream<K> {
    let mut initial_events = initial_events;
    Box::pin(stream.inspect(move |item| {
        let Ok(WatchEvent::Bookmark(bookmark)) = item else {
            return;
        };
        if initial_events {
            initial_events = bookmark
                .metadata
                .annotations
                .get(INITIAL_EVENTS_END_ANNOTATION)
                .is_none_or(|end| end != "true");
        } else {
            sink.send(bookmark.metadata.resource_version.clone());
        }
    }))
}

#[async_trait::async_trait]
impl<K: Object> ListerWatcher<K> for Observed<K> {
    async fn list(
        &self,
        params: &reflector::ListParams,
    ) -> Result<reflector::ObjectList<K>, reflector::Error> {
        self.counts.lists.fetch_add(1, Ordering::Relaxed);
        self.inner.list(params).await
    }

    async fn list_stream(
        &self,
        params: &reflector::ListParams,
    ) -> Result<reflector::ListStream<K>, reflector::Error> {
        self.counts.lists.fetch_add(1, Ordering::Relaxed);
        self.inner.list_stream(params).await
    }

    async fn watch(
        &self,
        params: &reflector::WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, reflector::Error> {
        self.counts.watches.fetch_add(1, Ordering::Relaxed);
        let stream = self.inner.watch(params, resource_version).await?;
        let sink = Arc::clone(&self.bookmarks);
        Ok(forward_bookmarks(stream, sink, params.send_initial_events))
    }

    async fn watch_with_decoding(
        &self,
        params: &reflector::WatchParams,
        resource_version: &str,
        decoding: reflector::WatchDecoding,
    ) -> Result<WatchStream<K>, reflector::Error> {
        self.counts.watches.fetch_add(1, Ordering::Relaxed);
        let stream = self
            .inner
            .watch_with_decoding(params, resource_version, decoding)
            .await?;
        let sink = Arc::clone(&self.bookmarks);
        Ok(forward_bookmarks(stream, sink, params.send_initial_events))
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[cfg(test)]
mod tests {
    use futures::stream;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::TypeMeta;
    use kube::core::watch::{Bookmark, BookmarkMeta};
    use parking_lot::Mutex;

    use super::*;

    fn bookmark(rv: &str, initial_events_end: bool) -> WatchEvent<ConfigMap> {
        let mut metadata = BookmarkMeta {
            resource_version: rv.into(),
            annotations: Default::default(),
        };
        if initial_events_end {
            metadata
                .annotations
                .insert(INITIAL_EVENTS_END_ANNOTATION.into(), "true".into());
        }
        WatchEvent::Bookmark(Bookmark {
            types: TypeMeta::default(),
            metadata,
        })
    }

    /// Reads the events of a watch (a streaming list's if `initial_events`) through the
    /// forwarding; returns the bookmarks forwarded, each with how many events had been read
    /// when it was.
    async fn forwarded(
        events: Vec<WatchEvent<ConfigMap>>,
        initial_events: bool,
    ) -> Vec<(String, usize)> {
        let read = Arc::new(Mutex::new(0usize));
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::new(BookmarkSink::default());
        sink.connect({
            let (read, got) = (Arc::clone(&read), Arc::clone(&got));
            move |rv| got.lock().push((rv, *read.lock()))
        });
        let items: Vec<Result<WatchEvent<ConfigMap>, reflector::Error>> =
            events.into_iter().map(Ok).collect();
        let mut stream = forward_bookmarks(Box::pin(stream::iter(items)), sink, initial_events);
        while stream.next().await.is_some() {
            *read.lock() += 1;
        }
        got.lock().clone()
    }

    #[tokio::test]
    async fn bookmarks_are_forwarded_as_the_reader_reaches_them() {
        let added = WatchEvent::Added(ConfigMap::default());
        let events = vec![
            added.clone(),
            bookmark("5", false),
            added,
            bookmark("6", false),
        ];
        // Forwarded when the reader takes them: after the events before them.
        assert_eq!(
            forwarded(events, false).await,
            [("5".to_owned(), 1), ("6".to_owned(), 3)]
        );
    }

    #[tokio::test]
    async fn a_streaming_lists_bookmarks_wait_for_its_end_which_is_not_forwarded() {
        let added = WatchEvent::Added(ConfigMap::default());
        let events = vec![
            added.clone(),
            bookmark("3", false),
            bookmark("4", true),
            added,
            bookmark("7", false),
        ];
        assert_eq!(forwarded(events, true).await, [("7".to_owned(), 4)]);
    }
}
