//! Chaos's "tiny writes": a response body re-cut into frames of a few bytes, each handed
//! to the connection on its own turn, so that the peer receives many small TCP writes
//! with edges anywhere, inside JSON tokens and inside watch lines.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use super::respond::Body;

/// Largest piece written at once.
const MAX_PIECE: usize = 16;

/// Wraps `inner` so that its data goes out in pieces of 1 to [`MAX_PIECE`] bytes (sizes
/// drawn from `seed`), with a scheduling turn between pieces so each one is flushed alone.
/// The size hint is unchanged: a fixed-length body keeps its `Content-Length`.
pub(crate) fn trickle(inner: Body, seed: u64) -> Body {
    http_body_util::BodyExt::boxed_unsync(Trickle {
        inner,
        rest: Bytes::new(),
        rng: fastrand::Rng::with_seed(seed),
        yielded: false,
    })
}

struct Trickle {
    inner: Body,
    /// What is left of the current frame.
    rest: Bytes,
    rng: fastrand::Rng,
    /// Whether the turn before the next piece was already given up.
    yielded: bool,
}

impl Trickle {
    fn piece(&mut self) -> Frame<Bytes> {
        let n = self.rng.usize(1..=MAX_PIECE).min(self.rest.len());
        self.yielded = false;
        Frame::data(self.rest.split_to(n))
    }
}

impl HttpBody for Trickle {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if !this.rest.is_empty() {
            if !this.yielded {
                // Pending makes the connection flush what it holds; come back at once.
                this.yielded = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            return Poll::Ready(Some(Ok(this.piece())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => {
                    this.rest = data;
                    Poll::Ready(Some(Ok(this.piece())))
                }
                Err(other) => Poll::Ready(Some(Ok(other))),
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};

    #[tokio::test]
    async fn pieces_are_small_and_reassemble_to_the_body() {
        let data: Bytes = (0..=255u8).cycle().take(1_000).collect::<Vec<u8>>().into();
        let mut body = trickle(Full::new(data.clone()).boxed_unsync(), 7);
        assert_eq!(body.size_hint().exact(), Some(1_000));
        let mut out = Vec::new();
        let mut pieces = 0;
        while let Some(frame) = body.frame().await {
            let chunk = frame.unwrap().into_data().unwrap();
            assert!((1..=MAX_PIECE).contains(&chunk.len()));
            out.extend_from_slice(&chunk);
            pieces += 1;
        }
        assert_eq!(out, data);
        assert!(pieces >= 1_000 / MAX_PIECE);
    }
}
