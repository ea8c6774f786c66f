//! [`WatchDecodeError`]: why one line of a watch stream yielded no event, and the short,
//! escaped excerpt of the line that every such error quotes.

/// How many bytes of a bad line its error quotes.
const EXCERPT_BYTES: usize = 120;

/// A line of a watch stream that did not yield an event. The stream goes on with the next line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchDecodeError {
    /// A line grew past the decoder's limit before its newline arrived; what was buffered is
    /// dropped, and so is the rest of the line as it arrives.
    #[error(
        "a watch event line exceeds {limit} bytes; it is discarded (raise the limit if objects this large are expected); it starts with: {excerpt}"
    )]
    LineTooLong {
        /// The limit, in bytes before the newline.
        limit: usize,
        /// The start of the line.
        excerpt: String,
    },

    /// The line is JSON with a `type` other than ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    #[error(
        "a watch event has the unknown type {event_type:?} (expected ADDED, MODIFIED, DELETED, BOOKMARK or ERROR); line: {excerpt}"
    )]
    UnknownType {
        /// The type the line carries.
        event_type: String,
        /// The start of the line.
        excerpt: String,
    },

    /// The line is not a watch event: invalid JSON, a missing `type` or `object`, an object
    /// that is not of the watched type, or trailing data.
    #[error("a watch event line does not decode ({source}); line: {excerpt}")]
    Malformed {
        /// What serde_json reported, with the column.
        #[source]
        source: serde_json::Error,
        /// The start of the line.
        excerpt: String,
    },

    /// The stream ended in the middle of a line (the connection closed mid-event).
    #[error("the watch stream ended inside a line of {len} bytes; line: {excerpt}")]
    Truncated {
        /// Bytes of the unfinished line.
        len: usize,
        /// The start of the line.
        excerpt: String,
    },
}

/// The start of a line for an error message: at most [`EXCERPT_BYTES`] bytes, invalid UTF-8
/// replaced, control characters escaped, and the full length if it was cut.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let cut = line.len().min(EXCERPT_BYTES);
    let head = String::from_utf8_lossy(line.get(..cut).unwrap_or(line));
    let mut text: String = head
        .chars()
        .flat_map(|c| {
            let escaped = c.is_control().then(|| c.escape_default());
            let plain = (!c.is_control()).then_some(c);
            escaped.into_iter().flatten().chain(plain)
        })
        .collect();
    if cut < line.len() {
        text.push_str(&format!("… ({} bytes)", line.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short_and_escape_control_characters() {
        let text = excerpt(format!("a\tb\u{1}{}", "x".repeat(500)).as_bytes());
        assert!(text.starts_with("a\\tb\\u{1}x"), "{text}");
        assert!(text.ends_with("… (504 bytes)"), "{text}");
        assert_eq!(excerpt(b"\xff{}"), "\u{fffd}{}");
    }
}
