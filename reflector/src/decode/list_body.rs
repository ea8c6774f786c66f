//! A list response body as a stream of [`ListPart`]s: bytes from an `AsyncBufRead` (the HTTP
//! body, frame by frame) through a [`ListBodyDecoder`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::io::AsyncBufRead;
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;

use super::ListStream;
use super::list::{ListBodyDecoder, ListPart};
use crate::Error;

/// Decodes a list response body into the parts of a [`ListStream`] as it arrives: the list's
/// metadata as soon as it has been read, then the items of each body frame.
///
/// A malformed body or an item that does not decode is an [`Error::Request`] with
/// `kube::Error::SerdeError` (what `kube::Api::list` reports for it), a body that ends early
/// or cannot be read one with `kube::Error::ReadEvents`; either ends the stream.
pub fn decode_list_body<K, R>(body: R) -> ListStream<K>
where
    K: DeserializeOwned + Send + 'static,
    R: AsyncBufRead + Send + 'static,
{
    ListBody {
        body: Box::pin(body),
        decoder: ListBodyDecoder::new(),
        ready: VecDeque::new(),
        scratch: Vec::new(),
        ended: false,
    }
    .boxed()
}

/// The stream behind [`decode_list_body`].
struct ListBody<R, K> {
    body: Pin<Box<R>>,
    decoder: ListBodyDecoder<K>,
    /// Parts decoded and not yet handed out.
    ready: VecDeque<ListPart<K>>,
    scratch: Vec<ListPart<K>>,
    ended: bool,
}

// Nothing of it is ever pinned in place: the body is boxed, the decoded items are moved out.
impl<R, K> Unpin for ListBody<R, K> {}

fn failed(source: kube::Error) -> Error {
    Error::Request {
        verb: "list",
        source,
    }
}

impl<R, K> Stream for ListBody<R, K>
where
    K: DeserializeOwned,
    R: AsyncBufRead,
{
    type Item = Result<ListPart<K>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(part) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(part)));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            let buffered = match ready!(this.body.as_mut().poll_fill_buf(cx)) {
                Ok(buffered) => buffered,
                Err(source) => {
                    this.ended = true;
                    return Poll::Ready(Some(Err(failed(kube::Error::ReadEvents(source)))));
                }
            };
            if buffered.is_empty() {
                this.ended = true;
                if let Err(error) = this.decoder.finish() {
                    let truncated = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, error);
                    return Poll::Ready(Some(Err(failed(kube::Error::ReadEvents(truncated)))));
                }
                continue;
            }
            let consumed = buffered.len();
            let decoded = this.decoder.decode_chunk(buffered, &mut this.scratch);
            this.body.as_mut().consume(consumed);
            this.ready.extend(this.scratch.drain(..));
            if let Err(error) = decoded {
                this.ended = true;
                this.ready.clear();
                return Poll::Ready(Some(Err(failed(kube::Error::SerdeError(error)))));
            }
        }
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

    #[tokio::test]
    async fn yields_the_metadata_then_the_items_of_each_frame() {
        let parts: Vec<_> = decode_list_body::<ConfigMap, _>(body(vec![
            Ok(br#"{"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},"#),
            Ok(br#"{"metadata":{"name":"b"}}]}"#),
        ]))
        .try_collect()
        .await
        .unwrap();
        assert!(
            matches!(&parts[0], ListPart::Meta(meta) if meta.resource_version.as_deref() == Some("5"))
        );
        assert!(matches!(&parts[1], ListPart::Items(items) if items.len() == 1));
        assert!(matches!(&parts[2], ListPart::Items(items) if items.len() == 1));
        assert_eq!(parts.len(), 3);
    }

    #[tokio::test]
    async fn a_truncated_or_malformed_body_ends_with_an_error() {
        let truncated: Result<Vec<_>, _> =
            decode_list_body::<ConfigMap, _>(body(vec![Ok(br#"{"items":[{"metadata""#)]))
                .try_collect()
                .await;
        assert!(truncated.is_err());
        let malformed: Result<Vec<_>, _> =
            decode_list_body::<ConfigMap, _>(body(vec![Ok(br#"{"items":[{"metadata":3}]}"#)]))
                .try_collect()
                .await;
        let error = malformed.unwrap_err();
        assert!(
            matches!(
                error,
                Error::Request {
                    verb: "list",
                    source: kube::Error::SerdeError(_)
                }
            ),
            "{error}"
        );
    }
}
