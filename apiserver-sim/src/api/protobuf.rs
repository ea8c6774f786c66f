//! Decoding of Kubernetes protobuf request bodies for a few simple core types.
//!
//! kubectl's imperative generators (`kubectl create configmap|secret|namespace|serviceaccount`)
//! send `application/vnd.kubernetes.protobuf` bodies. The simulator speaks JSON, but decodes
//! these bodies for ConfigMap, Secret, Namespace and ServiceAccount into the equivalent JSON
//! object; other types still get 415. Responses are always JSON (those clients also accept it).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::api::status::{ApiError, ApiResult};
use crate::kinds::resource_info::ResourceInfo;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Prefix of every Kubernetes protobuf document.
const MAGIC: &[u8] = b"k8s\x00";

enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn malformed() -> ApiError {
    ApiError::bad_request("malformed protobuf body")
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    fn varint(&mut self) -> ApiResult<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or_else(malformed)?;
            self.pos += 1;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(malformed())
    }

    fn take(&mut self, n: usize) -> ApiResult<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(malformed)?;
        let s = self.buf.get(self.pos..end).ok_or_else(malformed)?;
        self.pos = end;
        Ok(s)
    }

    /// The next (field number, value), or None at the end.
    fn next(&mut self) -> ApiResult<Option<(u64, Field<'a>)>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => Field::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Field::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed())?;
                Field::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Field::Fixed
            }
            _ => return Err(malformed()),
        };
        Ok(Some((key >> 3, field)))
    }
}

fn string(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A map entry (key = 1, value = 2); bytes values are base64-encoded when `binary`.
fn map_entry(b: &[u8], binary: bool) -> ApiResult<(String, Value)> {
    let mut r = Reader::new(b);
    let (mut k, mut v) = (String::new(), Value::String(String::new()));
    while let Some((n, f)) = r.next()? {
        match (n, f) {
            (1, Field::Bytes(x)) => k = string(x),
            (2, Field::Bytes(x)) if binary => v = Value::String(STANDARD.encode(x)),
            (2, Field::Bytes(x)) => v = Value::String(string(x)),
            _ => {}
        }
    }
    Ok((k, v))
}

fn insert_entry(m: &mut Map<String, Value>, field: &str, b: &[u8], binary: bool) -> ApiResult<()> {
    let (k, v) = map_entry(b, binary)?;
    let slot = m.entry(field).or_insert_with(|| json!({}));
    if let Some(o) = slot.as_object_mut() {
        o.insert(k, v);
    }
    Ok(())
}

fn push(m: &mut Map<String, Value>, field: &str, v: Value) {
    let slot = m.entry(field).or_insert_with(|| json!([]));
    if let Some(a) = slot.as_array_mut() {
        a.push(v);
    }
}

fn time(b: &[u8]) -> ApiResult<Value> {
    let mut r = Reader::new(b);
    let mut secs = 0i64;
    while let Some((n, f)) = r.next()? {
        if let (1, Field::Varint(v)) = (n, f) {
            secs = v as i64;
        }
    }
    let ts = jiff::Timestamp::from_second(secs).map_err(|_| malformed())?;
    Ok(Value::String(ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

fn owner_reference(b: &[u8]) -> ApiResult<Value> {
    let mut r = Reader::new(b);
    let mut m = Map::new();
    while let Some((n, f)) = r.next()? {
        let (name, v) = match (n, f) {
            (1, Field::Bytes(x)) => ("kind", Value::String(string(x))),
            (3, Field::Bytes(x)) => ("name", Value::String(string(x))),
            (4, Field::Bytes(x)) => ("uid", Value::String(string(x))),
            (5, Field::Bytes(x)) => ("apiVersion", Value::String(string(x))),
            (6, Field::Varint(x)) => ("controller", Value::Bool(x != 0)),
            (7, Field::Varint(x)) => ("blockOwnerDeletion", Value::Bool(x != 0)),
            _ => continue,
        };
        m.insert(name.into(), v);
    }
    Ok(Value::Object(m))
}

fn object_meta(b: &[u8]) -> ApiResult<Value> {
    let mut r = Reader::new(b);
    let mut m = Map::new();
    while let Some((n, f)) = r.next()? {
        match (n, f) {
            (1, Field::Bytes(x)) => _ = m.insert("name".into(), Value::String(string(x))),
            (2, Field::Bytes(x)) => _ = m.insert("generateName".into(), Value::String(string(x))),
            (3, Field::Bytes(x)) => _ = m.insert("namespace".into(), Value::String(string(x))),
            (5, Field::Bytes(x)) => _ = m.insert("uid".into(), Value::String(string(x))),
            (6, Field::Bytes(x)) => {
                _ = m.insert("resourceVersion".into(), Value::String(string(x)))
            }
            (8, Field::Bytes(x)) if !x.is_empty() => {
                _ = m.insert("creationTimestamp".into(), time(x)?)
            }
            (11, Field::Bytes(x)) => insert_entry(&mut m, "labels", x, false)?,
            (12, Field::Bytes(x)) => insert_entry(&mut m, "annotations", x, false)?,
            (13, Field::Bytes(x)) => push(&mut m, "ownerReferences", owner_reference(x)?),
            (14, Field::Bytes(x)) => push(&mut m, "finalizers", Value::String(string(x))),
            _ => {}
        }
    }
    // Empty strings are protobuf's "unset".
    m.retain(|_, v| v.as_str() != Some(""));
    Ok(Value::Object(m))
}

fn local_ref(b: &[u8]) -> ApiResult<Value> {
    let mut r = Reader::new(b);
    let mut m = Map::new();
    while let Some((n, f)) = r.next()? {
        let key = match n {
            1 => "kind",
            2 => "namespace",
            3 => "name",
            4 => "uid",
            5 => "apiVersion",
            6 => "resourceVersion",
            7 => "fieldPath",
            _ => continue,
        };
        if let Field::Bytes(x) = f {
            m.insert(key.into(), Value::String(string(x)));
        }
    }
    Ok(Value::Object(m))
}

fn repeated_strings_message(b: &[u8], field: u64) -> ApiResult<Vec<Value>> {
    let mut r = Reader::new(b);
    let mut out = Vec::new();
    while let Some((n, f)) = r.next()? {
        if let (true, Field::Bytes(x)) = (n == field, f) {
            out.push(Value::String(string(x)));
        }
    }
    Ok(out)
}

fn decode_object(plural: &str, b: &[u8]) -> ApiResult<Value> {
    let mut r = Reader::new(b);
    let mut m = Map::new();
    while let Some((n, f)) = r.next()? {
        let x = match f {
            Field::Bytes(x) => x,
            Field::Fixed => continue,
            Field::Varint(v) => {
                let key = match (plural, n) {
                    ("configmaps", 4) | ("secrets", 5) => "immutable",
                    ("serviceaccounts", 4) => "automountServiceAccountToken",
                    _ => continue,
                };
                m.insert(key.into(), Value::Bool(v != 0));
                continue;
            }
        };
        if n == 1 {
            m.insert("metadata".into(), object_meta(x)?);
            continue;
        }
        match (plural, n) {
            ("configmaps", 2) => insert_entry(&mut m, "data", x, false)?,
            ("configmaps", 3) => insert_entry(&mut m, "binaryData", x, true)?,
            ("secrets", 2) => insert_entry(&mut m, "data", x, true)?,
            ("secrets", 3) => _ = m.insert("type".into(), Value::String(string(x))),
            ("secrets", 4) => insert_entry(&mut m, "stringData", x, false)?,
            ("namespaces", 2) => {
                let fins = repeated_strings_message(x, 1)?;
                m.insert("spec".into(), json!({"finalizers": fins}));
            }
            ("serviceaccounts", 2) => push(&mut m, "secrets", local_ref(x)?),
            ("serviceaccounts", 3) => push(&mut m, "imagePullSecrets", local_ref(x)?),
            _ => {}
        }
    }
    Ok(Value::Object(m))
}

/// Decodes a protobuf body for the resource, or 415 when the type is not supported.
pub fn decode(info: &ResourceInfo, body: &[u8]) -> ApiResult<Value> {
    let supported = info.builtin
        && info.group.is_empty()
        && matches!(
            info.plural.as_str(),
            "configmaps" | "secrets" | "namespaces" | "serviceaccounts"
        );
    if !supported {
        return Err(ApiError::unsupported_media_type(
            PROTOBUF,
            &["application/json"],
        ));
    }
    let envelope = body.strip_prefix(MAGIC).ok_or_else(malformed)?;
    let mut r = Reader::new(envelope);
    let mut raw = None;
    while let Some((n, f)) = r.next()? {
        if let (2, Field::Bytes(x)) = (n, f) {
            raw = Some(x);
        }
    }
    decode_object(&info.plural, raw.ok_or_else(malformed)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len_field(n: u64, b: &[u8]) -> Vec<u8> {
        let mut out = vec![((n << 3) | 2) as u8, b.len() as u8];
        out.extend_from_slice(b);
        out
    }

    #[test]
    fn decodes_a_configmap_envelope() {
        let entry = [len_field(1, b"k"), len_field(2, b"v")].concat();
        let meta = [len_field(1, b"cm"), len_field(3, b"default")].concat();
        let obj = [len_field(1, &meta), len_field(2, &entry)].concat();
        let unknown = [len_field(1, b""), len_field(2, &obj)].concat();
        let body = [MAGIC, &unknown].concat();
        let info = crate::kinds::builtins::builtins()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .expect("configmaps");
        let v = decode(&info, &body).expect("decodes");
        assert_eq!(
            v,
            json!({"metadata": {"name": "cm", "namespace": "default"}, "data": {"k": "v"}})
        );
        assert_eq!(
            decode(&info, b"k8s\x00\xff").map_err(|e| e.code).err(),
            Some(400)
        );
        let pods = crate::kinds::builtins::builtins()
            .into_iter()
            .find(|r| r.plural == "pods")
            .expect("pods");
        assert_eq!(decode(&pods, &body).map_err(|e| e.code).err(), Some(415));
    }
}
