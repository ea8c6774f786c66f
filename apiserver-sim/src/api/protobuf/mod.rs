//! `application/vnd.kubernetes.protobuf` for every built-in kind: request bodies decoded
//! to the JSON the simulator stores, and objects, lists, watch events and `Status` errors
//! encoded for clients that prefer protobuf (client-go's typed clients, kubectl's
//! imperative commands). The conversion is generic: it walks the Kubernetes protobuf
//! descriptors ([`descriptors`], generated from the upstream `.proto` files) applying the
//! Kubernetes JSON conventions ([`conventions`]); no message is written by hand. Custom
//! resources have no protobuf form (as upstream): their protobuf bodies get 415.
//!
//! - [`descriptors`]: the descriptor pool and the message of each (group, version, kind);
//! - [`conventions`]: special JSON forms, embedded fields, JSON names;
//! - [`to_json`] / [`from_json`]: message ↔ JSON;
//! - [`time`]: `Time`, `MicroTime` and `Duration` strings;
//! - [`envelope`]: the `k8s\0` + `runtime.Unknown` framing and watch frames.

pub(crate) mod conventions;
pub(crate) mod descriptors;
pub(crate) mod envelope;
pub(crate) mod from_json;
pub(crate) mod time;
pub(crate) mod to_json;

use bytes::Bytes;
use prost_reflect::DynamicMessage;
use prost_reflect::prost::Message;
use serde_json::Value;

use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};

/// `Content-Type` of a protobuf watch stream.
pub const WATCH_CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// Whether objects of a served type at `version` have a protobuf form (built-in kinds
/// the descriptors know).
pub fn supports(info: &ResourceInfo, version: &str) -> bool {
    info.builtin && descriptors::message(&info.group, version, &info.kind).is_some()
}

fn malformed(e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("malformed protobuf body: {e}"))
}

/// The (group, version) of an `apiVersion`.
fn split_api_version(av: &str) -> (&str, &str) {
    av.split_once('/').unwrap_or(("", av))
}

/// Decodes an enveloped object by its own type meta into its JSON form (`apiVersion` and
/// `kind` included).
pub(crate) fn decode_object_bytes(doc: &[u8]) -> Result<Value, String> {
    to_json::document(doc)
}

/// Decodes a protobuf request body for a resource: 415 when the type has no protobuf
/// form, 400 when the body does not decode. The body's own type meta selects the message
/// (a `Scale`, a `DeleteOptions`); the endpoint's kind otherwise.
pub fn decode(info: &ResourceInfo, version: &str, body: &[u8]) -> ApiResult<Value> {
    if !supports(info, version) {
        return Err(ApiError::unsupported_media_type(
            crate::api::format::SUPPORTED_WITHOUT_PROTOBUF,
        ));
    }
    let env = envelope::unwrap(body).map_err(malformed)?;
    let (api_version, kind) = if env.kind.is_empty() {
        (info.api_version(version), info.kind.clone())
    } else {
        (env.api_version, env.kind)
    };
    let (group, v) = split_api_version(&api_version);
    let desc = descriptors::message(group, v, &kind).ok_or_else(|| {
        ApiError::bad_request(format!(
            "no kind \"{kind}\" is registered for version \"{api_version}\""
        ))
    })?;
    let msg = DynamicMessage::decode(desc, env.raw.as_slice()).map_err(malformed)?;
    let mut obj = to_json::message(&msg)
        .map_err(malformed)?
        .unwrap_or_else(|| Value::Object(Default::default()));
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(api_version));
        m.insert("kind".into(), Value::String(kind));
    }
    Ok(obj)
}

/// The message bytes (without framing) of a JSON object of `kind` in `api_version`.
fn message_bytes(api_version: &str, kind: &str, obj: &Value) -> Option<Vec<u8>> {
    let (group, version) = split_api_version(api_version);
    let desc = descriptors::message(group, version, kind)?;
    Some(from_json::message(&desc, obj)?.encode_to_vec())
}

/// An object as a protobuf document (None when its type has no protobuf form).
pub fn encode_object(api_version: &str, kind: &str, obj: &Value) -> Option<Bytes> {
    let raw = message_bytes(api_version, kind, obj)?;
    Some(Bytes::from(envelope::wrap(api_version, kind, &raw)))
}

/// A list as a protobuf document: its `ListMeta` (JSON) and items (JSON objects of
/// `item_kind`) encoded one by one into the list message's `metadata` and `items`.
pub fn encode_list<'a>(
    api_version: &str,
    list_kind: &str,
    item_kind: &str,
    list_meta: &Value,
    items: impl Iterator<Item = &'a Value>,
) -> Option<Bytes> {
    let (group, version) = split_api_version(api_version);
    let list = descriptors::message(group, version, list_kind)?;
    let item = descriptors::message(group, version, item_kind)?;
    let md_field = list.get_field_by_name("metadata")?;
    let items_field = list.get_field_by_name("items")?;
    let prost_reflect::Kind::Message(md_desc) = md_field.kind() else {
        return None;
    };
    let mut raw = Vec::new();
    let md = from_json::message(&md_desc, list_meta)?.encode_to_vec();
    envelope::push_bytes_field(&mut raw, md_field.number(), &md);
    for it in items {
        let bytes = from_json::message(&item, it)
            .map(|m| m.encode_to_vec())
            .unwrap_or_default();
        envelope::push_bytes_field(&mut raw, items_field.number(), &bytes);
    }
    Some(Bytes::from(envelope::wrap(api_version, list_kind, &raw)))
}

/// A `Status` (JSON) as a protobuf document.
pub fn encode_status(status: &Value) -> Bytes {
    encode_object("v1", "Status", status).unwrap_or_default()
}

/// One protobuf watch frame carrying an encoded object (or `Status`).
pub fn watch_frame(event_type: &str, object: &[u8]) -> Bytes {
    Bytes::from(envelope::watch_frame(event_type, object))
}

#[cfg(test)]
#[path = "round_trip_tests.rs"]
mod round_trip_tests;
