//! Response representations chosen by `Accept` (see `api/accept.rs`): the full object,
//! metadata only (`PartialObjectMetadata`, as kube's metadata APIs and watchers ask for), or a
//! `Table` (as `kubectl get` asks for; rendered by `api/table.rs`).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::machinery::resource_info::ResourceInfo;

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// The object as stored (apiVersion rewritten to the requested version).
    Full,
    /// `meta.k8s.io/v1` `PartialObjectMetadata`.
    Metadata,
    /// A `meta.k8s.io` `Table` of the given version. Its rows are rendered by
    /// `api/table.rs`; here (row objects) it means the full object.
    Table(TableVersion),
}

/// The version of `meta.k8s.io` a `Table` is requested in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableVersion {
    /// `meta.k8s.io/v1`.
    V1,
    /// `meta.k8s.io/v1beta1`.
    V1beta1,
}

impl TableVersion {
    /// `meta.k8s.io/<version>`.
    pub fn api_version(self) -> &'static str {
        match self {
            TableVersion::V1 => "meta.k8s.io/v1",
            TableVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }
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
        Repr::Full | Repr::Table(_) if info.as_stored(version) => to_bytes(obj),
        Repr::Full | Repr::Table(_) => to_bytes(&info.to_served(version, obj)),
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
        (Repr::Table(v), _) => (v.api_version().into(), "Table".into()),
        (Repr::Full, true) => (info.api_version(version), info.list_kind.clone()),
        (Repr::Full, false) => (info.api_version(version), info.kind.clone()),
    }
}
