//! A watch body decoded on the runtime's other threads, in order: one task reads the body and
//! cuts it into batches of whole lines (the same splitting, limits and errors as
//! [`WatchLineDecoder`]); each large batch is decoded by a task of its own, so two batches
//! decode at once on a multi-threaded runtime; the stream hands out the events in body order.
//!
//! Memory stays bounded: at most [`BATCHES_AHEAD`] batches wait to be handed out (each at most
//! one body frame of lines), and the reader stops reading while they wait. Dropping the stream
//! stops the reader (and so closes the response) even while it waits for body bytes.

use std::future::poll_fn;
use std::pin::pin;
use std::task::{Poll, ready};

use futures::StreamExt;
use futures::io::AsyncBufRead;
use kube::api::WatchEvent;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::WatchStream;
use super::line::WatchLineDecoder;
use crate::Error;
use crate::error::WatchDecodeError;

/// Batches read ahead of the consumer.
const BATCHES_AHEAD: usize = 2;
/// A batch with at least this many bytes is decoded by a task of its own; a smaller one (a
/// quiet watch's single event) by the reader, which saves a task hand-off per event.
const SPAWN_BYTES: usize = 16 * 1024;

type Item<K> = Result<WatchEvent<K>, Error>;

/// A batch on its way to the consumer: decoded already, or being decoded by its task.
enum Batch<K> {
    Decoded(Vec<Item<K>>),
    Decoding(JoinHandle<Vec<Item<K>>>),
}

/// What the reader cut from one body frame, in order.
enum Segment {
    /// Whole lines, each followed by `\n`.
    Lines(Vec<u8>),
    /// A line the splitter rejected (too long).
    Failed(WatchDecodeError),
}

/// Decodes `body` as [`decode_watch_body`](super::decode_watch_body) does, on the current
/// tokio runtime's threads; see the module documentation.
pub(crate) fn decode_watch_body_pipelined<K, R>(body: R, max_line_len: usize) -> WatchStream<K>
where
    K: DeserializeOwned + Send + 'static,
    R: AsyncBufRead + Send + 'static,
{
    let (tx, rx) = mpsc::channel(BATCHES_AHEAD);
    tokio::spawn(read_batches::<K, R>(body, max_line_len, tx));
    futures::stream::unfold(rx, |mut rx| async move {
        let items = match rx.recv().await? {
            Batch::Decoded(items) => items,
            Batch::Decoding(task) => task.await.unwrap_or_else(|error| vec![Err(lost(error))]),
        };
        Some((futures::stream::iter(items), rx))
    })
    .flatten()
    .boxed()
}

/// The reader: cuts the body into batches and sends them (spawning the decoding of large
/// ones) until the body ends, fails, or the consumer goes away.
async fn read_batches<K, R>(body: R, max_line_len: usize, tx: mpsc::Sender<Batch<K>>)
where
    K: DeserializeOwned + Send + 'static,
    R: AsyncBufRead,
{
    let mut body = pin!(body);
    let mut splitter = WatchLineDecoder::<K>::with_max_line_len(max_line_len);
    loop {
        let frame = poll_fn(|cx| {
            let buffered = ready!(body.as_mut().poll_fill_buf(cx))?;
            if buffered.is_empty() {
                return Poll::Ready(Ok(None));
            }
            let len = buffered.len();
            let segments = split(&mut splitter, buffered);
            body.as_mut().consume(len);
            Poll::Ready(Ok::<_, std::io::Error>(Some(segments)))
        });
        let frame = tokio::select! {
            () = tx.closed() => return,
            frame = frame => frame,
        };
        let batch = match frame {
            Ok(Some(segments)) => batch(segments),
            Ok(None) => {
                let last = splitter.finish().map(|item| item.map_err(Error::from));
                let _ = tx.send(Batch::Decoded(last.into_iter().collect())).await;
                return;
            }
            Err(source) => {
                let broken = Error::Request {
                    verb: "watch",
                    source: kube::Error::ReadEvents(source),
                };
                let _ = tx.send(Batch::Decoded(vec![Err(broken)])).await;
                return;
            }
        };
        if tx.send(batch).await.is_err() {
            return;
        }
    }
}

/// Cuts one body frame into segments of whole lines and rejected lines; an unfinished last
/// line stays in the splitter.
fn split<K: DeserializeOwned>(splitter: &mut WatchLineDecoder<K>, frame: &[u8]) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut lines = Vec::new();
    let mut rest = frame;
    while !rest.is_empty() {
        let (consumed, item) = splitter.split_next(rest, |line| {
            lines.extend_from_slice(line);
            lines.push(b'\n');
            None::<Result<(), WatchDecodeError>>
        });
        rest = rest.get(consumed..).unwrap_or_default();
        if let Some(Err(error)) = item {
            if !lines.is_empty() {
                segments.push(Segment::Lines(std::mem::take(&mut lines)));
            }
            segments.push(Segment::Failed(error));
        }
    }
    if !lines.is_empty() {
        segments.push(Segment::Lines(lines));
    }
    segments
}

/// The batch of one frame's segments: decoded here if small, else by a task of its own.
fn batch<K: DeserializeOwned + Send + 'static>(segments: Vec<Segment>) -> Batch<K> {
    let bytes: usize = segments
        .iter()
        .map(|segment| match segment {
            Segment::Lines(lines) => lines.len(),
            Segment::Failed(_) => 0,
        })
        .sum();
    if bytes < SPAWN_BYTES {
        return Batch::Decoded(decode(segments));
    }
    Batch::Decoding(tokio::spawn(async move { decode(segments) }))
}

/// Decodes the segments' lines, in order.
fn decode<K: DeserializeOwned>(segments: Vec<Segment>) -> Vec<Item<K>> {
    let mut items = Vec::new();
    for segment in segments {
        match segment {
            Segment::Lines(lines) => {
                // The lines are whole and within the limit already.
                let mut decoder = WatchLineDecoder::<K>::with_max_line_len(usize::MAX);
                items.extend(
                    decoder
                        .decode_chunk(&lines)
                        .map(|item| item.map_err(Error::from)),
                );
            }
            Segment::Failed(error) => items.push(Err(Error::from(error))),
        }
    }
    items
}

/// The error for a batch whose decoding task failed (it panicked or the runtime shut down).
fn lost(error: tokio::task::JoinError) -> Error {
    Error::Request {
        verb: "watch",
        source: kube::Error::ReadEvents(std::io::Error::other(format!(
            "decoding a watch batch failed: {error}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use futures::{FutureExt, TryStreamExt};
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn event(i: usize) -> String {
        format!(
            "{{\"type\":\"ADDED\",\"object\":{{\"metadata\":{{\"name\":\"cm-{i}\",\"resourceVersion\":\"{i}\"}},\"data\":{{\"pad\":\"{}\"}}}}}}\n",
            "x".repeat(i % 700)
        )
    }

    /// Many events in frames cut at arbitrary places, large enough to be decoded by tasks:
    /// every event comes out, in order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_come_out_in_body_order() {
        let body: String = (0..3000).map(event).collect();
        let bytes = body.into_bytes();
        let frames: Vec<Result<Vec<u8>, std::io::Error>> = bytes
            .chunks(20_011)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        let reader = futures::stream::iter(frames).into_async_read();
        let events: Vec<_> = decode_watch_body_pipelined::<ConfigMap, _>(reader, 1 << 20)
            .try_collect()
            .await
            .unwrap();
        let names: Vec<String> = events
            .iter()
            .map(|event| match event {
                WatchEvent::Added(cm) => cm.metadata.name.clone().unwrap_or_default(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        let expected: Vec<String> = (0..3000).map(|i| format!("cm-{i}")).collect();
        assert_eq!(names, expected);
    }

    /// A line over the limit is an error item in its place, and decoding goes on; a read error
    /// ends the stream.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn too_long_lines_and_read_errors_keep_their_place() {
        let long = format!("{}\n", "y".repeat(5000));
        let frames: Vec<Result<Vec<u8>, std::io::Error>> = vec![
            Ok(event(1).into_bytes()),
            Ok(long.into_bytes()),
            Ok(event(2).into_bytes()),
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
            Ok(event(3).into_bytes()),
        ];
        let reader = futures::stream::iter(frames).into_async_read();
        let items: Vec<_> = decode_watch_body_pipelined::<ConfigMap, _>(reader, 1024)
            .collect()
            .await;
        assert_eq!(items.len(), 4, "{items:?}");
        assert!(matches!(items[0], Ok(WatchEvent::Added(_))));
        assert!(items[1].is_err());
        assert!(matches!(items[2], Ok(WatchEvent::Added(_))));
        assert!(items[3].as_ref().is_err_and(Error::is_stream_read_error));
    }

    /// Dropping the stream stops the reader even while it waits for bytes that never come.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_stream_stops_the_reader() {
        let (gate_tx, gate_rx) = futures::channel::oneshot::channel::<()>();
        let frames = futures::stream::iter([Ok::<_, std::io::Error>(event(1).into_bytes())])
            .chain(futures::stream::once(gate_rx.map(|_| Ok(Vec::new()))));
        let mut stream =
            decode_watch_body_pipelined::<ConfigMap, _>(frames.into_async_read(), 1024);
        assert!(matches!(
            stream.next().await,
            Some(Ok(WatchEvent::Added(_)))
        ));
        drop(stream);
        // The reader held the body: once it is gone, the body's other end is dropped too.
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while !gate_tx.is_canceled() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the reader dropped the body");
    }
}
