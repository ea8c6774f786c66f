//! Response representations chosen by `Accept`: the full object, or metadata only
//! (`PartialObjectMetadata`, as kube's metadata APIs and watchers ask for).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::kinds::resource_info::ResourceInfo;

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// The object as stored (apiVersion rewritten to the requested version).
    Full,
    /// `meta.k8s.io/v1` `PartialObjectMetadata`.
    Metadata,
}

/// `Content-Type` of a metadata-only object.
pub const METADATA_CT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
/// `Content-Type` of a metadata-only list.
pub const METADATA_LIST_CT: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// The media type of a `Content-Type` value: parameters dropped, trimmed, lowercase.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

impl Repr {
    /// Picks the representation from an `Accept` header: the first media range wins.
    pub fn from_accept(accept: Option<&str>) -> Self {
        let Some(first) = accept.and_then(|a| a.split(',').next()) else {
            return Repr::Full;
        };
        let params: Vec<&str> = first.split(';').map(str::trim).collect();
        let wants_meta = params
            .iter()
            .any(|p| *p == "as=PartialObjectMetadata" || *p == "as=PartialObjectMetadataList");
        let meta_group = params.contains(&"g=meta.k8s.io");
        if wants_meta && meta_group {
            Repr::Metadata
        } else {
            Repr::Full
        }
    }
}

/// Serializes a JSON value as one compact line (no trailing newline).
pub fn to_bytes(v: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// Renders one object.
pub fn render(info: &ResourceInfo, version: &str, obj: &Value, repr: Repr) -> Bytes {
    match repr {
        Repr::Metadata => to_bytes(&json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        })),
        Repr::Full if info.as_stored(version) => to_bytes(obj),
        Repr::Full => to_bytes(&info.to_served(version, obj)),
    }
}

/// Renders an object whose stored encoding is `cached` (empty when unknown), reusing that
/// encoding when the object goes out as stored.
pub fn render_cached(
    info: &ResourceInfo,
    version: &str,
    obj: &Value,
    cached: &Bytes,
    repr: Repr,
) -> Bytes {
    if repr == Repr::Full && info.as_stored(version) && !cached.is_empty() {
        return cached.clone();
    }
    render(info, version, obj, repr)
}

/// `apiVersion` and `kind` of a list (or of bookmark objects, with `list = false`).
pub fn type_meta(info: &ResourceInfo, version: &str, repr: Repr, list: bool) -> (String, String) {
    match (repr, list) {
        (Repr::Metadata, true) => ("meta.k8s.io/v1".into(), "PartialObjectMetadataList".into()),
        (Repr::Metadata, false) => ("meta.k8s.io/v1".into(), "PartialObjectMetadata".into()),
        (Repr::Full, true) => (info.api_version(version), info.list_kind.clone()),
        (Repr::Full, false) => (info.api_version(version), info.kind.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_selects_representation() {
        assert_eq!(Repr::from_accept(None), Repr::Full);
        assert_eq!(Repr::from_accept(Some("application/json")), Repr::Full);
        assert_eq!(
            Repr::from_accept(Some(
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
            )),
            Repr::Metadata
        );
        assert_eq!(
            Repr::from_accept(Some(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            )),
            Repr::Full
        );
    }
}
