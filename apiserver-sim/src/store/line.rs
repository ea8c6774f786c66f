//! The watch line of a write, encoded once: `{"type":KIND,"object":OBJ}\n` (what every
//! watcher of the resource sends as is), and the object part of it sliced without a copy
//! (the stored object's cached JSON).

use bytes::Bytes;
use serde_json::Value;

const LINE_HEAD: &[u8] = b"{\"type\":\"";
const LINE_MID: &[u8] = b"\",\"object\":";
const LINE_TAIL: &[u8] = b"}\n";

/// The watch line `{"type":KIND,"object":OBJ}\n`. `obj` is serialized into a per-thread
/// scratch buffer and copied once into an exactly sized allocation.
pub fn encode_line(kind: &str, obj: &Value) -> Bytes {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let Ok(mut buf) = scratch.try_borrow_mut() else {
            // Re-entered (cannot happen: serializing a `Value` calls back into nothing).
            return Bytes::from(encode_line_into(Vec::new(), kind, obj));
        };
        let out = std::mem::take(&mut *buf);
        let out = encode_line_into(out, kind, obj);
        let bytes = Bytes::copy_from_slice(&out);
        *buf = out;
        bytes
    })
}

fn encode_line_into(mut buf: Vec<u8>, kind: &str, obj: &Value) -> Vec<u8> {
    buf.clear();
    buf.extend_from_slice(LINE_HEAD);
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(LINE_MID);
    if serde_json::to_writer(&mut buf, obj).is_err() {
        // A `Value` always serializes; keep the line well-formed regardless.
        buf.truncate(LINE_HEAD.len() + kind.len() + LINE_MID.len());
        buf.extend_from_slice(b"null");
    }
    buf.extend_from_slice(LINE_TAIL);
    buf
}

/// The object part of a line built by [`encode_line`] for `kind` (no copy).
pub fn line_object(line: &Bytes, kind: &str) -> Bytes {
    let start = LINE_HEAD.len() + kind.len() + LINE_MID.len();
    let end = line.len().saturating_sub(LINE_TAIL.len());
    if start <= end {
        line.slice(start..end)
    } else {
        Bytes::new()
    }
}
