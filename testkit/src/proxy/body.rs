//! The body of a forwarded answer, passed through or shaped by a wire fault: cut off abruptly
//! (after whole watch events, or mid-event), stalled mid-body, truncated with a clean end; a
//! watch's body also ends cleanly when the proxy drops every watch, and carries the bookmarks
//! a test asks for at its event boundaries.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use tokio::sync::watch;

use super::bookmarks::Bookmarks;
use super::counts::OpenWatch;
use super::framing::{Frames, Framing};

/// Errors of a body: ending a body with one cuts the client's connection.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a body waits before it is cut off: HTTP/1 writes what the body yielded when the
/// body waits, and drops it when the body fails at once, so the bytes before a cut would never
/// reach the client. Loopback sends a watch's few kilobytes well within it.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(20);

/// The body of every answer of the proxy.
pub(crate) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// A whole body at once.
pub(crate) fn full(bytes: Bytes) -> ProxyBody {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// How an answer's body is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Passed through.
    Pass,
    /// Cut off abruptly: a watch after this many whole events (and half the next with
    /// `mid_event`), any other body in its middle.
    Cut { after_events: u32, mid_event: bool },
    /// The first half of the first chunk, then nothing for this long, then the rest.
    Stall(Duration),
    /// Ends cleanly after this many bytes.
    Truncate { keep_bytes: usize },
}

/// What an open watch stream adds: how its events are framed, when the proxy drops every
/// watch, and its place in the count of open watches.
pub(crate) struct WatchBody {
    /// The framing of its events.
    pub framing: Framing,
    /// Changes when the proxy drops every watch.
    pub dropped: watch::Receiver<u64>,
    /// For a watch that asked for bookmarks: when the test asks for one, and what it says.
    pub bookmarks: Option<Bookmarks>,
    /// Counted as open while the body lives (held, never read).
    pub _open: OpenWatch,
}

/// What the shaper does next.
enum Out {
    Data(Bytes),
    Sleep(Duration),
    /// End abruptly.
    Cut,
    /// End cleanly.
    End,
}

/// The state of a shaped body.
struct Shaper<S> {
    upstream: S,
    shape: Shape,
    watch: Option<WatchBody>,
    /// Watch cuts: where events end.
    frames: Option<Frames>,
    /// Cuts: whole events still to pass.
    events_left: u32,
    /// Cuts: the bytes held back (a watch's next event, or a whole body cut in its middle).
    held: Option<BytesMut>,
    /// Truncation: bytes passed so far.
    sent: usize,
    stalled: bool,
    /// A watch passed through: part of an event has gone out, not its end.
    mid_event: bool,
    /// A bookmark asked for, waiting for the end of the event going out.
    bookmark: Option<u64>,
    queue: VecDeque<Out>,
    done: bool,
}

/// `upstream`'s body, shaped by `shape`; `watch` for a watch stream.
pub(crate) fn shaped(
    upstream: kube::client::Body,
    shape: Shape,
    watch: Option<WatchBody>,
) -> ProxyBody {
    let mut shaper = Shaper {
        upstream: upstream.into_data_stream(),
        shape,
        frames: watch.as_ref().map(|w| Frames::new(w.framing)),
        watch,
        events_left: 0,
        held: None,
        sent: 0,
        stalled: false,
        mid_event: false,
        bookmark: None,
        queue: VecDeque::new(),
        done: false,
    };
    match shape {
        Shape::Cut {
            after_events,
            mid_event,
        } => {
            shaper.events_left = after_events;
            if shaper.frames.is_none() {
                shaper.held = Some(BytesMut::new());
            } else if after_events == 0 && !mid_event {
                shaper.queue.push_back(Out::Cut);
            }
        }
        Shape::Truncate { keep_bytes: 0 } => shaper.queue.push_back(Out::End),
        _ => {}
    }
    let frames = futures::stream::unfold(shaper, |mut shaper| async move {
        let item = shaper.next_frame().await?;
        Some((item, shaper))
    });
    StreamBody::new(frames).boxed_unsync()
}

impl<S> Shaper<S>
where
    S: futures::Stream<Item = Result<Bytes, kube::Error>> + Unpin,
{
    /// The next frame of the body, `None` at its clean end.
    async fn next_frame(&mut self) -> Option<Result<Frame<Bytes>, BoxError>> {
        loop {
            match self.queue.pop_front() {
                Some(Out::Data(bytes)) if bytes.is_empty() => continue,
                Some(Out::Data(bytes)) => return Some(Ok(Frame::data(bytes))),
                Some(Out::Sleep(d)) => {
                    tokio::time::sleep(d).await;
                    continue;
                }
                Some(Out::Cut) => {
                    // The connection sends what it holds while the body waits; a body error
                    // would drop that with the connection.
                    tokio::time::sleep(FLUSH_BEFORE_CUT).await;
                    self.done = true;
                    self.queue.clear();
                    return Some(Err("the fault proxy cut the answer off".into()));
                }
                Some(Out::End) => {
                    self.done = true;
                    self.queue.clear();
                    return None;
                }
                None if self.done => return None,
                None => {}
            }
            match self.upstream_chunk().await {
                Chunk::Data(chunk) => self.feed(chunk),
                Chunk::End => self.finish(),
                Chunk::Failed(error) => {
                    // The server broke the stream: the client's is broken the same way.
                    tracing::debug!("fault proxy: upstream body failed: {error}");
                    self.queue.push_back(Out::Cut);
                }
                Chunk::WatchDropped => self.queue.push_back(Out::End),
                Chunk::Bookmark(rv) => self.bookmark_asked(rv),
            }
        }
    }

    /// The next chunk from the server, or the proxy dropping every watch.
    async fn upstream_chunk(&mut self) -> Chunk {
        let chunk = match &mut self.watch {
            Some(watch) => tokio::select! {
                biased;
                _ = watch.dropped.changed() => return Chunk::WatchDropped,
                Some(rv) = next_bookmark(&mut watch.bookmarks) => return Chunk::Bookmark(rv),
                chunk = self.upstream.next() => chunk,
            },
            None => self.upstream.next().await,
        };
        match chunk {
            Some(Ok(bytes)) => Chunk::Data(bytes),
            Some(Err(error)) => Chunk::Failed(error),
            None => Chunk::End,
        }
    }

    /// Shapes one chunk from the server.
    fn feed(&mut self, chunk: Bytes) {
        match self.shape {
            Shape::Pass if self.frames.is_some() => self.feed_watch(chunk),
            Shape::Pass => self.queue.push_back(Out::Data(chunk)),
            Shape::Truncate { keep_bytes } => {
                let room = keep_bytes.saturating_sub(self.sent);
                if chunk.len() < room {
                    self.sent += chunk.len();
                    self.queue.push_back(Out::Data(chunk));
                } else {
                    self.queue.push_back(Out::Data(chunk.slice(..room)));
                    self.queue.push_back(Out::End);
                }
            }
            Shape::Stall(d) if !self.stalled => {
                self.stalled = true;
                let half = chunk.len() / 2;
                self.queue.push_back(Out::Data(chunk.slice(..half)));
                self.queue.push_back(Out::Sleep(d));
                self.queue.push_back(Out::Data(chunk.slice(half..)));
            }
            Shape::Stall(_) => self.queue.push_back(Out::Data(chunk)),
            Shape::Cut { mid_event, .. } => self.feed_cut(chunk, mid_event),
        }
    }

    /// A passed-through watch's chunk, with a bookmark asked for after the first event that
    /// ends in it.
    fn feed_watch(&mut self, chunk: Bytes) {
        let Some(frames) = &mut self.frames else {
            return self.queue.push_back(Out::Data(chunk));
        };
        let ends = frames.ends_in(&chunk);
        self.mid_event = match ends.last() {
            Some(&end) => end < chunk.len(),
            None => self.mid_event || !chunk.is_empty(),
        };
        match (self.bookmark.take(), ends.first()) {
            (Some(rv), Some(&end)) => {
                self.queue.push_back(Out::Data(chunk.slice(..end)));
                self.push_bookmark(rv);
                self.queue.push_back(Out::Data(chunk.slice(end..)));
            }
            (bookmark, _) => {
                self.bookmark = bookmark;
                self.queue.push_back(Out::Data(chunk));
            }
        }
    }

    /// A test asked for a bookmark at `rv`: it goes out now between two events, or after the
    /// event going out. Only a watch passed through gets one.
    fn bookmark_asked(&mut self, rv: u64) {
        if self.shape != Shape::Pass {
            return;
        }
        match self.mid_event {
            true => self.bookmark = Some(rv),
            false => self.push_bookmark(rv),
        }
    }

    fn push_bookmark(&mut self, rv: u64) {
        if let Some(bookmarks) = self.watch.as_ref().and_then(|w| w.bookmarks.as_ref()) {
            self.queue.push_back(Out::Data(bookmarks.line(rv)));
        }
    }

    /// A cut body's chunk: a watch's events pass until the cut; any other body is held until
    /// its end.
    fn feed_cut(&mut self, chunk: Bytes, mid_event: bool) {
        let Some(frames) = &mut self.frames else {
            if let Some(held) = &mut self.held {
                held.extend_from_slice(&chunk);
            }
            return;
        };
        let ends = frames.ends_in(&chunk);
        if let Some(held) = &mut self.held {
            // Collecting the event to cut in half.
            match ends.first() {
                Some(&end) => {
                    held.extend_from_slice(&chunk[..end]);
                    let event = std::mem::take(held).freeze();
                    self.queue.push_back(Out::Data(first_half(event)));
                    self.queue.push_back(Out::Cut);
                }
                None => held.extend_from_slice(&chunk),
            }
            return;
        }
        let left = self.events_left as usize;
        if left > ends.len() {
            self.events_left -= ends.len() as u32;
            self.queue.push_back(Out::Data(chunk));
            return;
        }
        let boundary = if left == 0 { 0 } else { ends[left - 1] };
        self.queue.push_back(Out::Data(chunk.slice(..boundary)));
        if !mid_event {
            self.queue.push_back(Out::Cut);
            return;
        }
        match ends.get(left) {
            Some(&end) => {
                self.queue
                    .push_back(Out::Data(first_half(chunk.slice(boundary..end))));
                self.queue.push_back(Out::Cut);
            }
            None => self.held = Some(BytesMut::from(&chunk[boundary..])),
        }
    }

    /// The server's body ended.
    fn finish(&mut self) {
        match self.shape {
            Shape::Cut { .. } => {
                // A body cut in its middle, or a watch that ended before its cut: cut it now.
                if let Some(held) = self.held.take() {
                    self.queue.push_back(Out::Data(first_half(held.freeze())));
                }
                self.queue.push_back(Out::Cut);
            }
            _ => self.queue.push_back(Out::End),
        }
    }
}

/// A chunk from the server, its end, its failure, or the proxy dropping every watch.
enum Chunk {
    Data(Bytes),
    End,
    Failed(kube::Error),
    WatchDropped,
    /// A test asked for a bookmark at this resourceVersion.
    Bookmark(u64),
}

/// The resourceVersion of the next bookmark a test asks for; `None` at once for a watch that
/// did not ask for bookmarks.
async fn next_bookmark(bookmarks: &mut Option<Bookmarks>) -> Option<u64> {
    match bookmarks {
        Some(bookmarks) => Some(bookmarks.next().await),
        None => None,
    }
}

/// The first half of `bytes` (never all of it).
fn first_half(bytes: Bytes) -> Bytes {
    let half = bytes.len() / 2;
    bytes.slice(..half)
}
