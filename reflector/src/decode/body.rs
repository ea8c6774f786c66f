//! The watch response body as a stream of events: bytes from an `AsyncBufRead` (the HTTP
//! body, frame by frame) through a [`WatchLineDecoder`], decoded where [`WatchDecoding`] says.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::io::AsyncBufRead;
use futures::{Stream, StreamExt};
use kube::api::WatchEvent;
use serde::de::DeserializeOwned;

use super::WatchStream;
use super::line::WatchLineDecoder;
use crate::Error;

/// Where the lines of a watch response body are decoded: a choice of configuration
/// ([`ReflectorOptions::watch_decoding`](crate::ReflectorOptions::watch_decoding), the last
/// argument of [`decode_watch_body`]), never inferred from the runtime. Both give the same
/// events in the same order, with the same errors and the same bound on a line's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum WatchDecoding {
    /// A task of its own reads the body and cuts it into batches of whole lines; a large batch
    /// (a busy watch, a streaming list) is decoded by a task of its own, so on a multi-threaded
    /// tokio runtime reading and decoding run on several threads while the stream still hands
    /// out the events in body order. At most two batches wait ahead of the consumer. The
    /// default: what a watch of a busy collection on the usual multi-threaded runtime wants.
    ///
    /// It spawns tokio tasks, so it needs a tokio runtime; called outside one,
    /// [`decode_watch_body`] decodes [`Inline`](WatchDecoding::Inline) instead.
    #[default]
    Pipelined,
    /// Each line is decoded as the stream is polled, on the polling task: no task hand-off per
    /// batch and nothing spawned. The better choice on a current-thread runtime (where the
    /// tasks of [`Pipelined`](WatchDecoding::Pipelined) cannot run beside each other) and for
    /// many quiet watches.
    Inline,
}

/// Decodes a watch response body into the reflector's stream of events.
///
/// Each line becomes one item: an event, or an [`Error::WatchDecode`] after which the stream
/// goes on with the next line (the reflector skips an undecodable line, ends the watch on an
/// oversize one, and rewatches after a truncated last line). A read error of the body is an
/// [`Error::Request`] with `kube::Error::ReadEvents` — the connection broke — and ends the
/// stream. Lines longer than `max_line_len` bytes are rejected.
///
/// `body` is typically what `kube::Client::request_stream` returns for a watch request; a
/// custom [`ListerWatcher`](crate::ListerWatcher) can use this to decode its own transport.
///
/// `decoding` says where the lines are decoded: [`WatchDecoding::Pipelined`] (the default of a
/// reflector: a reader task and decoding tasks, for several threads) or
/// [`WatchDecoding::Inline`] (as the stream is polled).
pub fn decode_watch_body<K, R>(
    body: R,
    max_line_len: usize,
    decoding: WatchDecoding,
) -> WatchStream<K>
where
    K: DeserializeOwned + Send + 'static,
    R: AsyncBufRead + Send + 'static,
{
    // Spawning needs a runtime: outside one, the pipelined decoder would have nowhere to run.
    let can_spawn = tokio::runtime::Handle::try_current().is_ok();
    if decoding == WatchDecoding::Pipelined && can_spawn {
        return super::pipelined::decode_watch_body_pipelined(body, max_line_len);
    }
    WatchBody {
        body: Box::pin(body),
        decoder: WatchLineDecoder::with_max_line_len(max_line_len),
        ended: false,
    }
    .boxed()
}

/// The stream behind [`decode_watch_body`]: decodes one line per item, on demand.
struct WatchBody<R, K> {
    body: Pin<Box<R>>,
    decoder: WatchLineDecoder<K>,
    ended: bool,
}

impl<R, K> Stream for WatchBody<R, K>
where
    K: DeserializeOwned,
    R: AsyncBufRead,
{
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        while !this.ended {
            let buffered = match ready!(this.body.as_mut().poll_fill_buf(cx)) {
                Ok(buffered) => buffered,
                Err(source) => {
                    this.ended = true;
                    return Poll::Ready(Some(Err(Error::Request {
                        verb: "watch",
                        source: kube::Error::ReadEvents(source),
                    })));
                }
            };
            if buffered.is_empty() {
                this.ended = true;
                return Poll::Ready(this.decoder.finish().map(|item| item.map_err(Error::from)));
            }
            let (consumed, item) = this.decoder.decode_next(buffered);
            this.body.as_mut().consume(consumed);
            if let Some(item) = item {
                return Poll::Ready(Some(item.map_err(Error::from)));
            }
        }
        Poll::Ready(None)
    }
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn body(chunks: Vec<Result<&'static [u8], std::io::Error>>) -> impl AsyncBufRead + Send {
        futures::stream::iter(chunks).into_async_read()
    }

    /// Both decoders, which must agree item for item.
    const DECODINGS: [WatchDecoding; 2] = [WatchDecoding::Inline, WatchDecoding::Pipelined];

    const ADDED: &[u8] = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";

    #[tokio::test]
    async fn yields_events_across_frames_then_ends() {
        let (head, tail) = ADDED.split_at(20);
        for decoding in DECODINGS {
            let stream = decode_watch_body::<ConfigMap, _>(
                body(vec![Ok(head), Ok(tail), Ok(b"\r\n"), Ok(ADDED)]),
                1024,
                decoding,
            );
            let items: Vec<_> = stream.collect().await;
            assert_eq!(items.len(), 2, "{decoding:?}");
            assert!(items.iter().all(|i| matches!(i, Ok(WatchEvent::Added(_)))));
        }
    }

    #[tokio::test]
    async fn a_read_error_is_a_stream_read_error_and_ends_the_stream() {
        for decoding in DECODINGS {
            let broken = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
            let mut stream = decode_watch_body::<ConfigMap, _>(
                body(vec![Ok(ADDED), Ok(b"{\"type\""), Err(broken), Ok(ADDED)]),
                1024,
                decoding,
            );
            assert!(matches!(
                stream.try_next().await,
                Ok(Some(WatchEvent::Added(_)))
            ));
            let error = stream.try_next().await.unwrap_err();
            assert!(error.is_stream_read_error(), "{decoding:?}: {error}");
            assert!(stream.next().await.is_none());
        }
    }

    #[tokio::test]
    async fn a_truncated_tail_and_an_oversize_line_are_error_items() {
        for decoding in DECODINGS {
            let items: Vec<_> = decode_watch_body::<ConfigMap, _>(
                body(vec![
                    Ok(&[b'x'; 2000]),
                    Ok(b"\n"),
                    Ok(ADDED),
                    Ok(b"{\"type\":\"AD"),
                ]),
                1024,
                decoding,
            )
            .collect()
            .await;
            assert_eq!(items.len(), 3, "{decoding:?}: {items:?}");
            let too_long = items[0].as_ref().unwrap_err();
            assert!(!too_long.is_skippable_object() && !too_long.is_stream_read_error());
            assert!(matches!(items[1], Ok(WatchEvent::Added(_))));
            let truncated = items[2].as_ref().unwrap_err();
            assert!(truncated.is_stream_read_error(), "{truncated}");
        }
    }

    #[test]
    fn pipelined_decoding_outside_a_runtime_decodes_inline_instead_of_panicking() {
        let stream = decode_watch_body::<ConfigMap, _>(
            body(vec![Ok(ADDED), Ok(ADDED)]),
            1024,
            WatchDecoding::Pipelined,
        );
        let items: Vec<_> = futures::executor::block_on(stream.collect());
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(|i| matches!(i, Ok(WatchEvent::Added(_)))));
    }
}
