//! Decoding a request: its body as JSON (JSON, or Kubernetes protobuf for built-in kinds;
//! `DeleteOptions`, which client-go's typed clients send in protobuf), its write options
//! (field manager, ownership), and a PATCH's type and document.

use std::borrow::Cow;

use http::{HeaderMap, header};
use serde_json::Value;

use super::request::Req;
use crate::api::patch::PatchKind;
use crate::api::repr;
use crate::machinery::go_json;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::ops::{Ownership, WriteOptions};

/// A create or update body (JSON, YAML, or protobuf for built-in kinds), as JSON.
pub(super) fn parse_body(
    info: &ResourceInfo,
    version: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Value> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let base = repr::media_type(ct);
    match base.as_str() {
        crate::api::format::PROTOBUF => crate::api::protobuf::decode(info, version, body),
        "" | "application/json" | "*/*" => decode_json(info, body),
        "application/yaml" => decode_yaml(info, body),
        _ => Err(ApiError::unsupported_media_type(
            if crate::api::protobuf::supports(info, version) {
                crate::api::format::SUPPORTED
            } else {
                crate::api::format::SUPPORTED_WITHOUT_PROTOBUF
            },
        )),
    }
}

/// A JSON body; 400 in upstream's words when it is not JSON (Go's syntax error, and the
/// body's start).
pub(super) fn decode_json(info: &ResourceInfo, body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| match go_json::syntax_error(body) {
        Some(syntax) => ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {syntax} ({})",
            info.kind,
            summarize_body(body)
        )),
        None => ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {e}",
            info.kind,
            info.storage_version(),
            info.kind
        )),
    })
}

/// A YAML body (upstream converts it to JSON first, and quotes the conversion's error
/// as it is).
fn decode_yaml(info: &ResourceInfo, body: &[u8]) -> ApiResult<Value> {
    crate::api::yaml11::to_json(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): {e} ({})",
            info.kind,
            summarize_body(body)
        ))
    })
}

/// The start of a body as upstream quotes it in decode errors: up to 30 bytes, as text when
/// it starts like an object, in hex otherwise.
fn summarize_body(body: &[u8]) -> String {
    const SHOWN: usize = 30;
    let shown = &body[..body.len().min(SHOWN)];
    let more = if body.len() > SHOWN { " ..." } else { "" };
    match body.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(shown)),
        Some(_) => {
            let hex: String = shown.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// A PATCH document that is not JSON: 400 with Go's syntax error, as upstream words it.
fn decode_patch(body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "error decoding patch: {}",
            go_json::decode_error(body, e)
        ))
    })
}

/// A body that is not a stored object (a DELETE's `DeleteOptions`, a SelfSubjectAccessReview,
/// a TokenRequest) as JSON: client-go's typed clients, kubectl's among them, send these in
/// protobuf, decoded here by the body's own type meta.
pub(super) fn json_body<'a>(headers: &HeaderMap, body: &'a [u8]) -> ApiResult<Cow<'a, [u8]>> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if repr::media_type(ct) != crate::api::format::PROTOBUF || body.is_empty() {
        return Ok(Cow::Borrowed(body));
    }
    let v = crate::api::protobuf::decode_object_bytes(body)
        .map_err(|e| ApiError::bad_request(format!("malformed protobuf body: {e}")))?;
    Ok(Cow::Owned(serde_json::to_vec(&v).unwrap_or_default()))
}

/// Options of a write made through the API: its field manager (the `fieldManager`
/// parameter, or the `User-Agent` up to its first `/`) records what it owns.
pub(super) fn write_options(req: &Req, headers: &HeaderMap) -> ApiResult<WriteOptions> {
    let mut wo = WriteOptions::parse(req.query)?;
    if wo.field_manager.is_empty() {
        let ua = headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        wo.field_manager = crate::api::apply::manager_from_user_agent(ua);
    }
    wo.ownership = Ownership::Record;
    wo.owner_refs = req.owner_refs.clone();
    wo.subresource = req.sub.name();
    Ok(wo)
}

/// A PATCH's options, patch type and patch document, checked.
pub(super) fn patch_input(
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<(WriteOptions, PatchKind, Value)> {
    let wo = write_options(req, headers)?;
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let kind = PatchKind::from_content_type(ct, req.info.builtin)?;
    let refuse =
        |field: &str, message: &str| Err(ApiError::invalid_options("PatchOptions", field, message));
    if kind == PatchKind::Apply && req.query.get("fieldManager").is_none_or(str::is_empty) {
        return refuse(
            "fieldManager",
            "Required value: is required for apply patch",
        );
    }
    if kind != PatchKind::Apply && req.query.get("force").is_some() {
        return refuse(
            "force",
            "Forbidden: may not be specified for non-apply patch",
        );
    }
    let patch_doc = if kind == PatchKind::Apply {
        crate::api::apply::decode_config(body)?
    } else {
        decode_patch(body)?
    };
    Ok((wo, kind, patch_doc))
}
