//! Accessors and server-owned values for object metadata held as JSON.

use serde_json::{Map, Value};

/// A `metadata` field, without JSON-pointer parsing (this is on every hot path).
pub fn field<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    obj.get("metadata")?.get(name)
}

/// `metadata.name`, or "".
pub fn name(obj: &Value) -> &str {
    field(obj, "name").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.namespace`, or "".
pub fn namespace(obj: &Value) -> &str {
    field(obj, "namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.uid`, or "".
pub fn uid(obj: &Value) -> &str {
    field(obj, "uid").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.resourceVersion`, or "".
pub fn resource_version(obj: &Value) -> &str {
    field(obj, "resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn is_deleting(obj: &Value) -> bool {
    field(obj, "deletionTimestamp").is_some_and(|v| !v.is_null())
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    super::pointer::owned_strings(obj, "/metadata/finalizers")
}

/// Sets `metadata.finalizers`, removing the key when empty.
pub fn set_finalizers(obj: &mut Value, fins: Vec<String>) {
    let m = metadata_mut(obj);
    if fins.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert(
            "finalizers".into(),
            Value::Array(fins.into_iter().map(Value::String).collect()),
        );
    }
}

/// Whether the object has owner references and whether it is being deleted, with one
/// lookup of `metadata` (both are read on every write).
pub fn owned_and_deleting(obj: &Value) -> (bool, bool) {
    let Some(md) = obj.get("metadata") else {
        return (false, false);
    };
    let owned = md
        .get("ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let deleting = md.get("deletionTimestamp").is_some_and(|v| !v.is_null());
    (owned, deleting)
}

/// `metadata.ownerReferences`.
pub fn owner_refs(obj: &Value) -> &[Value] {
    field(obj, "ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `metadata.generation`, or 0.
pub fn generation(obj: &Value) -> i64 {
    field(obj, "generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// Mutable `metadata` map, created (and the object turned into a map) when missing.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let Value::Object(root) = obj else {
        unreachable!("object ensured above")
    };
    let md = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !md.is_object() {
        *md = Value::Object(Map::new());
    }
    match md {
        Value::Object(m) => m,
        _ => unreachable!("metadata ensured above"),
    }
}

/// Sets a string field of `metadata`.
pub fn set_str(obj: &mut Value, field: &str, value: &str) {
    metadata_mut(obj).insert(field.into(), Value::String(value.into()));
}

/// Sets a string field of `metadata` to a number's decimal text, reusing the field's
/// string when there is one (the resourceVersion of every write).
pub fn set_u64(obj: &mut Value, field: &str, value: u64) {
    use std::fmt::Write;
    let md = metadata_mut(obj);
    if let Some(Value::String(s)) = md.get_mut(field) {
        s.clear();
        let _ = write!(s, "{value}");
    } else {
        md.insert(field.into(), Value::String(value.to_string()));
    }
}

thread_local! {
    /// SplitMix64 state, seeded once per thread from the OS.
    static RNG: std::cell::Cell<u64> = std::cell::Cell::new({
        let b = uuid::Uuid::new_v4().into_bytes();
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    });
    /// The last formatted second, so a busy writer formats each second once.
    static NOW: std::cell::RefCell<(i64, String)> = const { std::cell::RefCell::new((i64::MIN, String::new())) };
}

/// A fast pseudo-random u64 (SplitMix64; uids need uniqueness, not secrecy).
fn next_random() -> u64 {
    RNG.with(|s| {
        let z = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(z);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    })
}

/// Current time as RFC 3339 UTC with whole seconds.
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    let secs = now.as_second();
    NOW.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != secs {
            *c = (secs, now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        }
        c.1.clone()
    })
}

/// A fresh random (version 4) UUID.
pub fn new_uid() -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&next_random().to_le_bytes());
    bytes[8..].copy_from_slice(&next_random().to_le_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// Five random characters from the upstream generateName alphabet.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let r = next_random();
    (0..5)
        .map(|i| ALPHABET[((r >> (i * 8)) as usize & 0xff) % ALPHABET.len()] as char)
        .collect()
}

/// Whether `s` is a DNS-1123 subdomain (lowercase alphanumerics, '-', '.', at most 253).
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

/// Whether `s` is a DNS-1123 label (at most 63, no dots).
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && !s.contains('.') && is_dns_subdomain(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_finalizers() {
        let mut o = json!({"metadata": {"name": "a", "finalizers": ["x"]}});
        assert_eq!(name(&o), "a");
        assert_eq!(finalizers(&o), vec!["x".to_string()]);
        set_finalizers(&mut o, vec![]);
        assert!(o.pointer("/metadata/finalizers").is_none());
        assert!(is_dns_subdomain("a.b-c"));
        assert!(!is_dns_subdomain("A"));
        assert!(!is_dns_label("a.b"));
        assert_eq!(random_suffix().len(), 5);
        assert_ne!(new_uid(), new_uid());
        assert_eq!(new_uid().as_bytes()[14], b'4');
        assert!(now_rfc3339().ends_with('Z'));
        let mut weird = json!(3);
        set_str(&mut weird, "name", "x");
        assert_eq!(name(&weird), "x");
    }
}
