//! The watch wire format: one `{"type":T,"object":O}` JSON line per event, the ERROR
//! line, and the annotation that marks the end of a streaming list's initial events.

use bytes::{Bytes, BytesMut};

use crate::api::repr::to_bytes;
use crate::machinery::status::ApiError;

/// Annotation on the bookmark that ends the initial events of a streaming list.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// `{"type":T,"object":O}\n`.
pub fn line(kind: &str, obj: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(obj.len() + 32);
    push_line(&mut b, kind, obj);
    b.freeze()
}

/// Appends `{"type":T,"object":O}\n` to `b`.
pub fn push_line(b: &mut BytesMut, kind: &str, obj: &[u8]) {
    b.reserve(obj.len() + 32);
    b.extend_from_slice(b"{\"type\":\"");
    b.extend_from_slice(kind.as_bytes());
    b.extend_from_slice(b"\",\"object\":");
    b.extend_from_slice(obj);
    b.extend_from_slice(b"}\n");
}

/// A single-event stream carrying an ERROR (used for a too-old resourceVersion).
pub fn error_line(err: &ApiError) -> Bytes {
    line("ERROR", &to_bytes(&err.to_status()))
}
