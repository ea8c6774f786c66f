//! `WatchLineDecoder`: splits the bytes of a watch response body, in chunks cut anywhere, into
//! lines and decodes each line into a `WatchEvent<K>`, without doing any I/O itself.
//!
//! A line may span any number of chunks: its start is carried over in one buffer that grows
//! geometrically (each byte is copied at most once into it), and only the new bytes of each
//! chunk are searched for the newline, so decoding is linear in the input. A line that lies
//! wholly within one chunk is decoded in place, without a copy.

use std::marker::PhantomData;

use kube::api::WatchEvent;
use serde::de::DeserializeOwned;

use super::event::decode_watch_event;
use crate::error::{WatchDecodeError, excerpt};

/// The default limit on the length of one watch-event line: 64 MiB, far above the largest
/// object etcd stores (1.5 MiB by default), yet a bound on what a broken server that never
/// sends a newline can make the client buffer.
pub const DEFAULT_MAX_WATCH_LINE_LEN: usize = 64 * 1024 * 1024;

/// A carry-over buffer larger than this is freed after use rather than kept for the next line,
/// so one huge event does not pin its memory for the rest of the watch.
const KEEP_CARRY_CAPACITY: usize = 1024 * 1024;

/// What one call to [`WatchLineDecoder::decode_next`] or [`WatchLineDecoder::finish`] yields.
pub type DecodedLine<K> = Result<WatchEvent<K>, WatchDecodeError>;

/// Turns the bytes of a watch response body, fed in chunks split anywhere, into watch events.
///
/// Lines end with `\n` or `\r\n`; blank lines are skipped. Each other line is one item: a
/// [`WatchEvent`] (an `ERROR` line is a `WatchEvent::Error` carrying the server's `Status`) or a
/// [`WatchDecodeError`], after which decoding goes on with the next line. A line longer than
/// the limit ([`DEFAULT_MAX_WATCH_LINE_LEN`] unless set with [`with_max_line_len`](Self::with_max_line_len))
/// is reported as soon as it exceeds it and then skipped, so memory stays bounded whatever the
/// server sends. At the end of the stream, [`finish`](Self::finish) reports an unfinished line.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use reflector::{WatchEvent, WatchLineDecoder};
///
/// let mut decoder = WatchLineDecoder::<ConfigMap>::new();
/// let body = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\r\n\n{\"type\":\"DEL";
/// let events: Vec<_> = decoder.decode_chunk(body).collect();
/// assert!(matches!(events.as_slice(), [Ok(WatchEvent::Added(_))]));
/// let more: Vec<_> = decoder.decode_chunk(b"ETED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n").collect();
/// assert!(matches!(more.as_slice(), [Ok(WatchEvent::Deleted(_))]));
/// assert!(decoder.finish().is_none());
/// ```
pub struct WatchLineDecoder<K> {
    /// The start of a line whose newline has not arrived yet.
    carry: Vec<u8>,
    max_line_len: usize,
    /// Inside a line that exceeded the limit: drop bytes until its newline.
    discarding: bool,
    marker: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for WatchLineDecoder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchLineDecoder")
            .field("buffered", &self.carry.len())
            .field("max_line_len", &self.max_line_len)
            .field("discarding", &self.discarding)
            .finish()
    }
}

impl<K: DeserializeOwned> Default for WatchLineDecoder<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: DeserializeOwned> WatchLineDecoder<K> {
    /// A decoder with the default line limit ([`DEFAULT_MAX_WATCH_LINE_LEN`]).
    pub fn new() -> Self {
        Self::with_max_line_len(DEFAULT_MAX_WATCH_LINE_LEN)
    }

    /// A decoder that rejects lines longer than `max_line_len` bytes (before the newline).
    pub fn with_max_line_len(max_line_len: usize) -> Self {
        Self {
            carry: Vec::new(),
            max_line_len,
            discarding: false,
            marker: PhantomData,
        }
    }

    /// The line limit in bytes.
    pub fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// Bytes of an unfinished line held from earlier chunks.
    pub fn buffered(&self) -> usize {
        self.carry.len()
    }

    /// Reads `input` up to the end of the first line that yields an item and returns how many
    /// bytes it consumed with that item; when no line in `input` yields one, it consumes all of
    /// `input` (keeping an unfinished line for the next call) and returns `None`.
    ///
    /// Call it again with the unconsumed rest until that is empty; this is the shape of
    /// `AsyncBufRead::poll_fill_buf` / `consume`, so an event is decoded only when asked for.
    pub fn decode_next(&mut self, input: &[u8]) -> (usize, Option<DecodedLine<K>>) {
        self.split_next(input, decode_line)
    }

    /// [`decode_next`](Self::decode_next) with `on_line` in place of decoding each complete
    /// line (its bytes without the `\n`, at most the line limit): the line splitting, limits
    /// and errors are the same, and what `on_line` returns is the line's item (`None`: go on).
    pub(crate) fn split_next<T>(
        &mut self,
        input: &[u8],
        mut on_line: impl FnMut(&[u8]) -> Option<Result<T, WatchDecodeError>>,
    ) -> (usize, Option<Result<T, WatchDecodeError>>) {
        let mut consumed = 0;
        while let Some(rest) = input.get(consumed..).filter(|rest| !rest.is_empty()) {
            let Some(newline) = memchr::memchr(b'\n', rest) else {
                return (input.len(), self.hold(rest));
            };
            consumed += newline + 1;
            let line = rest.get(..newline).unwrap_or_default();
            if self.discarding {
                self.discarding = false;
                continue;
            }
            if self.carry.len() + line.len() > self.max_line_len {
                let error = self.too_long(line);
                self.release_carry();
                return (consumed, Some(Err(error)));
            }
            let item = if self.carry.is_empty() {
                on_line(line)
            } else {
                self.carry.extend_from_slice(line);
                let item = on_line(&self.carry);
                self.release_carry();
                item
            };
            if item.is_some() {
                return (consumed, item);
            }
        }
        (consumed, None)
    }

    /// Every item of one chunk, decoded lazily; an unfinished last line is kept for the next
    /// chunk.
    pub fn decode_chunk<'a>(&'a mut self, chunk: &'a [u8]) -> DecodeChunk<'a, K> {
        DecodeChunk {
            decoder: self,
            rest: chunk,
        }
    }

    /// Ends the stream: an unfinished last line that is a complete event (a server that did
    /// not end its last line) is that event; any other is [`WatchDecodeError::Truncated`].
    /// The decoder is empty afterwards.
    pub fn finish(&mut self) -> Option<DecodedLine<K>> {
        self.discarding = false;
        if is_blank(&self.carry) {
            self.release_carry();
            return None;
        }
        let item = match decode_line(&self.carry) {
            Some(Err(WatchDecodeError::Malformed { .. })) => {
                Some(Err(WatchDecodeError::Truncated {
                    len: self.carry.len(),
                    excerpt: excerpt(&self.carry),
                }))
            }
            item => item,
        };
        self.release_carry();
        item
    }

    /// Keeps the start of an unfinished line, unless it is too long.
    fn hold<T>(&mut self, part: &[u8]) -> Option<Result<T, WatchDecodeError>> {
        if self.discarding {
            return None;
        }
        if self.carry.len() + part.len() > self.max_line_len {
            let error = self.too_long(part);
            self.release_carry();
            self.discarding = true;
            return Some(Err(error));
        }
        self.carry.extend_from_slice(part);
        None
    }

    /// The error for a line that exceeds the limit, quoting its start.
    fn too_long(&self, part: &[u8]) -> WatchDecodeError {
        let start = if self.carry.is_empty() {
            part
        } else {
            &self.carry
        };
        WatchDecodeError::LineTooLong {
            limit: self.max_line_len,
            excerpt: excerpt(start),
        }
    }

    /// Empties the carry-over buffer, freeing it if one huge line made it large.
    fn release_carry(&mut self) {
        if self.carry.capacity() > KEEP_CARRY_CAPACITY {
            self.carry = Vec::new();
        } else {
            self.carry.clear();
        }
    }
}

/// The items of one chunk, from [`WatchLineDecoder::decode_chunk`].
#[derive(Debug)]
pub struct DecodeChunk<'a, K> {
    decoder: &'a mut WatchLineDecoder<K>,
    rest: &'a [u8],
}

impl<K: DeserializeOwned> Iterator for DecodeChunk<'_, K> {
    type Item = DecodedLine<K>;

    fn next(&mut self) -> Option<Self::Item> {
        let (consumed, item) = self.decoder.decode_next(self.rest);
        self.rest = self.rest.get(consumed..).unwrap_or_default();
        item
    }
}

/// Decodes one line without its `\n`: a trailing `\r` is dropped, a blank line yields nothing.
fn decode_line<K: DeserializeOwned>(line: &[u8]) -> Option<DecodedLine<K>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if is_blank(line) {
        return None;
    }
    Some(decode_watch_event(line))
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn line(event_type: &str, name: &str) -> String {
        format!(
            r#"{{"type":"{event_type}","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","resourceVersion":"1"}}}}}}"#
        )
    }

    /// What an item was, in a form tests compare: `ADDED a`, `BOOKMARK 5`, `ERROR 410`, or the
    /// error's variant.
    fn describe(item: &DecodedLine<ConfigMap>) -> String {
        let name = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
        match item {
            Ok(WatchEvent::Added(cm)) => format!("ADDED {}", name(cm)),
            Ok(WatchEvent::Modified(cm)) => format!("MODIFIED {}", name(cm)),
            Ok(WatchEvent::Deleted(cm)) => format!("DELETED {}", name(cm)),
            Ok(WatchEvent::Bookmark(b)) => format!("BOOKMARK {}", b.metadata.resource_version),
            Ok(WatchEvent::Error(status)) => format!("ERROR {}", status.code),
            Err(WatchDecodeError::LineTooLong { .. }) => "too long".into(),
            Err(WatchDecodeError::UnknownType { .. }) => "unknown type".into(),
            Err(WatchDecodeError::Malformed { .. }) => "malformed".into(),
            Err(WatchDecodeError::Truncated { .. }) => "truncated".into(),
        }
    }

    /// Feeds `chunks` one after the other, then ends the stream.
    fn run(decoder: &mut WatchLineDecoder<ConfigMap>, chunks: &[&[u8]]) -> Vec<String> {
        let mut items: Vec<String> = Vec::new();
        for chunk in chunks {
            items.extend(decoder.decode_chunk(chunk).map(|item| describe(&item)));
        }
        items.extend(decoder.finish().map(|item| describe(&item)));
        items
    }

    fn decode_all(chunks: &[&[u8]]) -> Vec<String> {
        run(&mut WatchLineDecoder::new(), chunks)
    }

    #[test]
    fn splits_at_every_byte_boundary_give_the_same_events() {
        let body = format!(
            "{}\n{}\r\n\n{}\n",
            line("ADDED", "a"),
            line("MODIFIED", "a"),
            line("DELETED", "a")
        );
        let body = body.as_bytes();
        let expected = vec!["ADDED a", "MODIFIED a", "DELETED a"];
        assert_eq!(decode_all(&[body]), expected);
        for cut in 0..=body.len() {
            let (head, tail) = body.split_at(cut);
            assert_eq!(decode_all(&[head, tail]), expected, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(decode_all(&bytes), expected);
    }

    #[test]
    fn accepts_crlf_and_skips_blank_lines() {
        let body = format!("\r\n\n  \t\r\n{}\r\n\r\n\n", line("ADDED", "b"));
        assert_eq!(decode_all(&[body.as_bytes()]), vec!["ADDED b"]);
    }

    #[test]
    fn decodes_bookmarks_and_errors() {
        let body = concat!(
            r#"{"type":"BOOKMARK","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"5"}}}"#,
            "\n",
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (17)","reason":"Expired","code":410}}"#,
            "\n",
        );
        assert_eq!(
            decode_all(&[body.as_bytes()]),
            vec!["BOOKMARK 5", "ERROR 410"]
        );
    }

    #[test]
    fn a_malformed_line_is_an_error_and_the_next_line_still_decodes() {
        let body = format!(
            "{{\"type\":\"ADDED\",\"obj\n{}\n{}\n{}\n",
            line("RENAMED", "x"),
            r#"{"type":"ADDED","object":{"data":5}}"#,
            line("ADDED", "c")
        );
        assert_eq!(
            decode_all(&[body.as_bytes()]),
            vec!["malformed", "unknown type", "malformed", "ADDED c"]
        );
    }

    #[test]
    fn an_oversize_line_is_reported_once_and_skipped() {
        let long = line("ADDED", &"n".repeat(300));
        let body = format!("{}\n{long}\n{}\n", line("ADDED", "a"), line("ADDED", "b"));
        let mut decoder = WatchLineDecoder::with_max_line_len(200);
        assert_eq!(
            run(&mut decoder, &[body.as_bytes()]),
            vec!["ADDED a", "too long", "ADDED b"]
        );
        // Fed in small chunks, the error comes as soon as the limit is passed and nothing of
        // the long line is held afterwards.
        let mut decoder = WatchLineDecoder::<ConfigMap>::with_max_line_len(200);
        let mut items = Vec::new();
        for chunk in body.as_bytes().chunks(7) {
            items.extend(decoder.decode_chunk(chunk).map(|item| describe(&item)));
            assert!(decoder.buffered() <= 200);
        }
        assert_eq!(items, vec!["ADDED a", "too long", "ADDED b"]);
    }

    #[test]
    fn a_server_that_never_sends_a_newline_cannot_grow_the_buffer() {
        let mut decoder = WatchLineDecoder::<ConfigMap>::with_max_line_len(1000);
        let chunk = [b'x'; 300];
        let mut errors = 0;
        for _ in 0..100 {
            errors += decoder.decode_chunk(&chunk).count();
            assert!(decoder.buffered() <= 1000);
        }
        assert_eq!(errors, 1, "one error per oversize line");
        assert!(
            decoder.finish().is_none(),
            "the discarded line is not reported again"
        );
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        let text = line("ADDED", "a");
        let mut decoder = WatchLineDecoder::with_max_line_len(text.len());
        let body = format!("{text}\n");
        assert_eq!(
            run(
                &mut decoder,
                &[
                    body.as_bytes().split_at(10).0,
                    body.as_bytes().split_at(10).1
                ]
            ),
            vec!["ADDED a"]
        );
        let mut decoder = WatchLineDecoder::with_max_line_len(text.len() - 1);
        assert_eq!(run(&mut decoder, &[body.as_bytes()]), vec!["too long"]);
    }

    #[test]
    fn a_truncated_last_line_is_an_error() {
        let whole = line("ADDED", "a");
        let cut = &whole.as_bytes()[..whole.len() - 3];
        assert_eq!(
            decode_all(&[line("ADDED", "z").as_bytes(), b"\n", cut]),
            vec!["ADDED z", "truncated"]
        );
        let mut decoder = WatchLineDecoder::<ConfigMap>::new();
        assert_eq!(decoder.decode_chunk(cut).count(), 0);
        let Some(Err(err)) = decoder.finish() else {
            panic!("no error at the end");
        };
        assert!(err.to_string().contains("ended inside a line"), "{err}");
        assert_eq!(decoder.buffered(), 0);
    }

    #[test]
    fn a_complete_last_line_without_newline_is_decoded() {
        assert_eq!(
            decode_all(&[line("ADDED", "a").as_bytes(), b"\r"]),
            vec!["ADDED a"]
        );
    }

    #[test]
    fn decode_next_stops_after_each_item() {
        let body = format!("\n{}\n{}\n", line("ADDED", "a"), line("ADDED", "b"));
        let body = body.as_bytes();
        let mut decoder = WatchLineDecoder::<ConfigMap>::new();
        let (first, item) = decoder.decode_next(body);
        assert_eq!(item.as_ref().map(describe).as_deref(), Some("ADDED a"));
        assert_eq!(body[first - 1], b'\n');
        let (second, item) = decoder.decode_next(&body[first..]);
        assert_eq!(item.as_ref().map(describe).as_deref(), Some("ADDED b"));
        assert_eq!(first + second, body.len());
    }
}
