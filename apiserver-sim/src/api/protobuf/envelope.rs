//! The Kubernetes protobuf framing: every object or list is `k8s\0` followed by a
//! `runtime.Unknown` carrying its `apiVersion`, `kind` and the message bytes; a watch
//! stream is a sequence of 4-byte big-endian length-prefixed `meta/v1.WatchEvent`
//! messages (without the prefix), each object inside in the framing above.

use prost_reflect::prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{DynamicMessage, Value as Pb};

use super::descriptors::{RUNTIME, by_name};

/// Prefix of every Kubernetes protobuf document.
pub const MAGIC: &[u8] = b"k8s\x00";

/// A decoded envelope.
pub struct Unknown {
    /// `typeMeta.apiVersion`.
    pub api_version: String,
    /// `typeMeta.kind`.
    pub kind: String,
    /// The message bytes.
    pub raw: Vec<u8>,
}

/// Splits a document into its type meta and message bytes.
pub fn unwrap(doc: &[u8]) -> Result<Unknown, String> {
    let body = doc
        .strip_prefix(MAGIC)
        .ok_or("missing the k8s\\0 protobuf prefix")?;
    let desc = by_name(&format!("{RUNTIME}.Unknown")).ok_or("no runtime.Unknown message")?;
    let msg = DynamicMessage::decode(desc, body).map_err(|e| e.to_string())?;
    let text = |m: &DynamicMessage, f: &str| {
        m.get_field_by_name(f)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let (api_version, kind) = match msg.get_field_by_name("typeMeta").as_deref() {
        Some(Pb::Message(tm)) => (text(tm, "apiVersion"), text(tm, "kind")),
        _ => (String::new(), String::new()),
    };
    let raw = msg
        .get_field_by_name("raw")
        .and_then(|v| v.as_bytes().map(|b| b.to_vec()))
        .unwrap_or_default();
    Ok(Unknown {
        api_version,
        kind,
        raw,
    })
}

/// Appends a length-delimited field.
pub fn push_bytes_field(buf: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, buf);
    encode_varint(bytes.len() as u64, buf);
    buf.extend_from_slice(bytes);
}

/// `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw}` (field numbers as
/// upstream: typeMeta 1 with apiVersion 1 and kind 2, raw 2).
pub fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    push_bytes_field(&mut type_meta, 1, api_version.as_bytes());
    push_bytes_field(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(MAGIC);
    push_bytes_field(&mut out, 1, &type_meta);
    push_bytes_field(&mut out, 2, raw);
    out
}

/// One watch frame: the length prefix, then `WatchEvent{type, object: RawExtension{raw}}`.
pub fn watch_frame(event_type: &str, object: &[u8]) -> Vec<u8> {
    let mut raw_ext = Vec::with_capacity(object.len() + 8);
    push_bytes_field(&mut raw_ext, 1, object);
    let mut event = Vec::with_capacity(raw_ext.len() + event_type.len() + 8);
    push_bytes_field(&mut event, 1, event_type.as_bytes());
    push_bytes_field(&mut event, 2, &raw_ext);
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend_from_slice(&(event.len() as u32).to_be_bytes());
    out.extend_from_slice(&event);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::protobuf::descriptors::META_V1;

    #[test]
    fn framing_matches_the_message_definitions() {
        // The hand-placed field numbers agree with the descriptors.
        let unknown = by_name(&format!("{RUNTIME}.Unknown")).expect("Unknown");
        let number = |m: &prost_reflect::MessageDescriptor, f: &str| {
            m.get_field_by_name(f).map(|f| f.number())
        };
        assert_eq!(number(&unknown, "typeMeta"), Some(1));
        assert_eq!(number(&unknown, "raw"), Some(2));
        let event = by_name(&format!("{META_V1}.WatchEvent")).expect("WatchEvent");
        assert_eq!(number(&event, "type"), Some(1));
        assert_eq!(number(&event, "object"), Some(2));
        let doc = wrap("apps/v1", "Deployment", b"\x0a\x00");
        let back = unwrap(&doc).expect("unwrap");
        assert_eq!(
            (
                back.api_version.as_str(),
                back.kind.as_str(),
                back.raw.as_slice()
            ),
            ("apps/v1", "Deployment", b"\x0a\x00".as_slice())
        );
        let frame = watch_frame("ADDED", &doc);
        let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        let ev = DynamicMessage::decode(event, &frame[4..]).expect("event");
        assert_eq!(
            ev.get_field_by_name("type")
                .and_then(|v| v.as_str().map(str::to_string)),
            Some("ADDED".to_string())
        );
    }
}
