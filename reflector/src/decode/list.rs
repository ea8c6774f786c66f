//! `ListBodyDecoder`: decodes a list response body (`{"kind":…,"metadata":{…},"items":[…]}`),
//! fed in chunks cut anywhere, into its metadata and its items while it streams in, without
//! doing any I/O itself.
//!
//! The top-level object is walked key by key; the `metadata` value is decoded into a
//! [`ListMeta`] as soon as it is complete (a server writes it before the items, so a pager learns
//! the continue token before the first item arrives), and each element of `items` is decoded into
//! `K` as soon as it has arrived. An item is decoded in place, its parser finding its end; only an
//! item cut by the end of the bytes received so far is scanned for its end (counting braces
//! outside strings, resuming where the previous chunk ended) and decoded once it is whole, so no
//! item is parsed twice and a malformed one is reported by the same parser that decodes the rest.

use std::marker::PhantomData;

use kube::api::ListMeta;
use serde::de::DeserializeOwned;
use serde::de::Error as _;

/// What a list body yields, in body order: its type (`apiVersion`, `kind`) and its metadata
/// once each (when they have been read), and its items in batches.
#[derive(Debug)]
pub enum ListPart<K> {
    /// The list's `apiVersion`.
    ApiVersion(String),
    /// The list's `kind` (`ConfigMapList`): the kind of its items, which a server may send
    /// without their own `apiVersion` and `kind` (kube-apiserver does for built-in kinds).
    Kind(String),
    /// The list's `metadata` (resource version, continue token, remaining item count).
    Meta(ListMeta),
    /// Items of the list, decoded in the order the body holds them.
    Items(Vec<K>),
}

/// Where the walk of the top-level object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening brace.
    Start,
    /// Expecting a key, or the closing brace.
    Key,
    /// Expecting the colon after a key.
    Colon(Field),
    /// Expecting a key's value.
    Value(Field),
    /// Inside a value that is being scanned to its end.
    Scanning(Field),
    /// Expecting `,` or the closing brace after a value.
    AfterValue,
    /// After `[` of the items: expecting an item or `]`.
    ItemsOpen,
    /// After a `,` between items: expecting an item.
    NextItem,
    /// Inside an item that is being scanned to its end.
    Item,
    /// Expecting `,` or `]` after an item.
    AfterItem,
    /// After the closing brace: only whitespace may follow.
    End,
}

/// The top-level fields the decoder treats specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    ApiVersion,
    Items,
    Kind,
    Metadata,
    Other,
}

/// The resumable scan of one JSON value: where it started, how far it has been read, and the
/// nesting and string state at that point.
#[derive(Debug, Clone, Copy, Default)]
struct Scan {
    start: usize,
    pos: usize,
    depth: u32,
    in_string: bool,
    /// The byte before `pos` was a backslash inside a string.
    escaped: bool,
    /// The value's first byte: `{`, `[`, `"`, or another for a scalar.
    kind: u8,
}

/// Decodes a list body fed in chunks into [`ListPart`]s; see the module documentation.
pub struct ListBodyDecoder<K> {
    /// Bytes received and not yet consumed; `buf[..consumed]` is done with.
    buf: Vec<u8>,
    consumed: usize,
    state: State,
    scan: Scan,
    marker: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for ListBodyDecoder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListBodyDecoder")
            .field("buffered", &(self.buf.len() - self.consumed))
            .field("state", &self.state)
            .finish()
    }
}

impl<K: DeserializeOwned> Default for ListBodyDecoder<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: DeserializeOwned> ListBodyDecoder<K> {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self {
            buf: Vec::new(),
            consumed: 0,
            state: State::Start,
            scan: Scan::default(),
            marker: PhantomData,
        }
    }

    /// Decodes what `chunk` completes: the metadata and the items whose last byte it holds, in
    /// body order, pushed to `parts` (items of one chunk as one batch). An unfinished value is
    /// kept for the next chunk. An error (malformed JSON, an item that does not decode) ends the
    /// body: the decoder must not be fed again.
    pub fn decode_chunk(
        &mut self,
        chunk: &[u8],
        parts: &mut Vec<ListPart<K>>,
    ) -> Result<(), serde_json::Error> {
        self.buf.extend_from_slice(chunk);
        let mut items = Vec::new();
        let result = self.walk(parts, &mut items);
        if !items.is_empty() {
            parts.push(ListPart::Items(items));
        }
        self.compact();
        result
    }

    /// Ends the body: an error unless the top-level object was complete.
    pub fn finish(&self) -> Result<(), serde_json::Error> {
        if self.state == State::End {
            return Ok(());
        }
        Err(serde_json::Error::custom(format!(
            "the list body ended early ({:?}, {} bytes unread)",
            self.state,
            self.buf.len() - self.consumed
        )))
    }

    /// Bytes held for an unfinished value.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.consumed
    }

    /// Moves the unconsumed bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.consumed == 0 {
            return;
        }
        let consumed = self.consumed;
        self.buf.drain(..consumed);
        self.consumed = 0;
        if matches!(self.state, State::Scanning(_) | State::Item) {
            self.scan.start -= consumed;
            self.scan.pos -= consumed;
        }
    }

    /// Walks as far as the buffered bytes allow.
    fn walk(
        &mut self,
        parts: &mut Vec<ListPart<K>>,
        items: &mut Vec<K>,
    ) -> Result<(), serde_json::Error> {
        loop {
            match self.state {
                State::Scanning(field) => {
                    let Some(end) = self.scan_value() else {
                        return Ok(());
                    };
                    let value = &self.buf[self.scan.start..end];
                    let text = || serde_json::from_slice::<String>(value).ok();
                    match field {
                        Field::Metadata => {
                            parts.push(ListPart::Meta(serde_json::from_slice(value)?))
                        }
                        Field::ApiVersion => parts.extend(text().map(ListPart::ApiVersion)),
                        Field::Kind => parts.extend(text().map(ListPart::Kind)),
                        Field::Items | Field::Other => {}
                    }
                    self.consumed = end;
                    self.state = State::AfterValue;
                    continue;
                }
                State::Item => {
                    // An item that did not fit in the bytes seen so far: find its end first,
                    // then decode it once.
                    let Some(end) = self.scan_value() else {
                        return Ok(());
                    };
                    items.push(serde_json::from_slice(&self.buf[self.scan.start..end])?);
                    self.consumed = end;
                    self.state = State::AfterItem;
                    continue;
                }
                _ => {}
            }
            let Some(at) = self.skip_whitespace() else {
                return Ok(());
            };
            let byte = self.buf[at];
            self.state = match (self.state, byte) {
                (State::Start, b'{') => State::Key,
                (State::Key, b'}') | (State::AfterValue, b'}') => State::End,
                (State::Key, b'"') => {
                    let Some(end) = find_string_end(&self.buf, at + 1) else {
                        return Ok(());
                    };
                    let field = match &self.buf[at + 1..end - 1] {
                        b"apiVersion" => Field::ApiVersion,
                        b"items" => Field::Items,
                        b"kind" => Field::Kind,
                        b"metadata" => Field::Metadata,
                        _ => Field::Other,
                    };
                    self.consumed = end;
                    State::Colon(field)
                }
                (State::Colon(field), b':') => State::Value(field),
                (State::Value(Field::Items), b'[') => State::ItemsOpen,
                (State::Value(field), _) => {
                    self.start_scan(at, byte);
                    self.state = State::Scanning(field);
                    continue;
                }
                (State::AfterValue, b',') => State::Key,
                (State::ItemsOpen, b']') | (State::AfterItem, b']') => State::AfterValue,
                (State::AfterItem, b',') => State::NextItem,
                (State::ItemsOpen | State::NextItem, b'{') => {
                    // Decode the item in place: its parser finds its end. Only an item that
                    // ends past the bytes seen so far is scanned for its end (and decoded when
                    // that has arrived).
                    let mut values =
                        serde_json::Deserializer::from_slice(&self.buf[at..]).into_iter::<K>();
                    match values.next() {
                        Some(Ok(item)) => {
                            items.push(item);
                            self.consumed = at + values.byte_offset();
                            State::AfterItem
                        }
                        None => return Ok(()),
                        Some(Err(error)) if error.is_eof() => {
                            self.start_scan(at, byte);
                            self.state = State::Item;
                            continue;
                        }
                        Some(Err(error)) => return Err(error),
                    }
                }
                (state, byte) => {
                    return Err(serde_json::Error::custom(format!(
                        "unexpected {:?} in a list body ({state:?})",
                        char::from(byte)
                    )));
                }
            };
            if self.consumed <= at {
                self.consumed = at + 1;
            }
        }
    }

    /// The offset of the next non-whitespace byte, everything before it consumed.
    fn skip_whitespace(&mut self) -> Option<usize> {
        let rest = &self.buf[self.consumed..];
        let offset = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))?;
        self.consumed += offset;
        Some(self.consumed)
    }

    fn start_scan(&mut self, at: usize, kind: u8) {
        self.scan = Scan {
            start: at,
            pos: at + 1,
            depth: u32::from(matches!(kind, b'{' | b'[')),
            in_string: kind == b'"',
            escaped: false,
            kind,
        };
    }

    /// Advances the current scan; the end (exclusive) of the value once it is complete.
    fn scan_value(&mut self) -> Option<usize> {
        let scan = &mut self.scan;
        let buf = &self.buf;
        if !matches!(scan.kind, b'{' | b'[' | b'"') {
            // A scalar ends at the first delimiter.
            let rest = buf.get(scan.pos..)?;
            let offset = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))?;
            return Some(scan.pos + offset);
        }
        let (open, close) = if scan.kind == b'[' {
            (b'[', b']')
        } else {
            (b'{', b'}')
        };
        // A plain loop: in JSON the next quote or brace is a few bytes away, where a search
        // call costs more than it skips.
        while let Some(&byte) = buf.get(scan.pos) {
            scan.pos += 1;
            if scan.in_string {
                if scan.escaped {
                    scan.escaped = false;
                } else if byte == b'\\' {
                    scan.escaped = true;
                } else if byte == b'"' {
                    scan.in_string = false;
                    if scan.depth == 0 {
                        // A string value ends at its closing quote.
                        return Some(scan.pos);
                    }
                }
            } else if byte == b'"' {
                scan.in_string = true;
            } else if byte == open {
                scan.depth += 1;
            } else if byte == close {
                scan.depth -= 1;
                if scan.depth == 0 {
                    return Some(scan.pos);
                }
            }
        }
        None
    }
}

/// The end (exclusive, past the closing quote) of the string whose content starts at `from`.
fn find_string_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    loop {
        let offset = memchr::memchr2(b'"', b'\\', buf.get(pos..)?)?;
        if buf[pos + offset] == b'"' {
            return Some(pos + offset + 1);
        }
        // Skip the escaped byte (which may not have arrived yet).
        pos += offset + 2;
        if pos > buf.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    const BODY: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"12","continue":"next"},"items":[{"metadata":{"name":"a","annotations":{"x":"}{\"]["}}},{"metadata":{"name":"b"},"data":{"k":"v\\"}} ]}"#;

    /// The metadata, the item names and the list's type fields of a decoded body.
    type Decoded = (Option<ListMeta>, Vec<String>, Vec<String>);

    fn decode_cut(body: &[u8], cuts: &[usize]) -> Result<Decoded, serde_json::Error> {
        let mut decoder = ListBodyDecoder::<ConfigMap>::new();
        let mut parts = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain([&body.len()]) {
            decoder.decode_chunk(&body[start..cut], &mut parts)?;
            start = cut;
        }
        decoder.finish()?;
        let mut meta = None;
        let mut names = Vec::new();
        let mut types = Vec::new();
        for part in parts {
            match part {
                ListPart::Meta(m) => {
                    assert!(names.is_empty(), "the metadata comes before the items");
                    meta = Some(m);
                }
                ListPart::Items(items) => names.extend(
                    items
                        .into_iter()
                        .map(|cm| cm.metadata.name.unwrap_or_default()),
                ),
                ListPart::ApiVersion(v) | ListPart::Kind(v) => types.push(v),
            }
        }
        Ok((meta, names, types))
    }

    #[test]
    fn metadata_and_items_decode_whatever_the_chunk_cuts() {
        let body = BODY.as_bytes();
        for a in 0..body.len() {
            for b in [a, (a + 7).min(body.len()), body.len()] {
                let (meta, names, types) = decode_cut(body, &[a, b.max(a)]).unwrap();
                let meta = meta.unwrap();
                assert_eq!(meta.resource_version.as_deref(), Some("12"));
                assert_eq!(meta.continue_.as_deref(), Some("next"));
                assert_eq!(names, ["a", "b"], "cut at {a}, {b}");
                assert_eq!(types, ["ConfigMapList", "v1"], "cut at {a}, {b}");
            }
        }
    }

    #[test]
    fn items_before_metadata_and_an_empty_list_decode() {
        let (meta, names, _) =
            decode_cut(br#"{"items":[],"metadata":{"resourceVersion":"3"}}"#, &[]).unwrap();
        assert!(names.is_empty());
        assert_eq!(meta.unwrap().resource_version.as_deref(), Some("3"));
        let (_, names, _) = decode_cut(
            br#" { "items" : [ {"metadata":{"name":"z"}} ] } "#,
            &[3, 20],
        )
        .unwrap();
        assert_eq!(names, ["z"]);
    }

    #[test]
    fn truncated_and_malformed_bodies_are_errors() {
        assert!(decode_cut(&BODY.as_bytes()[..BODY.len() - 3], &[]).is_err());
        assert!(decode_cut(br#"{"items":[{"metadata":{"name":1}}]}"#, &[]).is_err());
        assert!(decode_cut(br#"{"items":[{"metadata":{}}] x}"#, &[]).is_err());
        assert!(decode_cut(br#"["#, &[]).is_err());
    }
}
