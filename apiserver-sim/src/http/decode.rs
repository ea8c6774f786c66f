//! Decoding a request: its body as JSON (JSON, or Kubernetes protobuf for built-in kinds;
//! `DeleteOptions`, which client-go's typed clients send in protobuf), its write options
//! (field manager, ownership), and a PATCH's type and document.

use std::borrow::Cow;

use http::{HeaderMap, header};
use serde_json::Value;

use super::request::{Req, Sub};
use crate::api::patch::PatchKind;
use crate::api::repr;
use crate::api::status::{ApiError, ApiResult};
use crate::kinds::resource_info::ResourceInfo;
use crate::ops::{Ownership, WriteOptions};

/// A create or update body (JSON, or protobuf for built-in kinds), as JSON.
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
    if base == crate::api::protobuf::PROTOBUF {
        return crate::api::protobuf::decode(info, version, body);
    }
    if !(base.is_empty() || base == "application/json" || base == "*/*") {
        return Err(ApiError::unsupported_media_type(ct, &["application/json"]));
    }
    decode_json(info, body)
}

/// A JSON body; 400 naming the kind when it is not JSON.
pub(super) fn decode_json(info: &ResourceInfo, body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {e}",
            info.kind,
            info.storage_version(),
            info.kind
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
    if repr::media_type(ct) != crate::api::protobuf::PROTOBUF || body.is_empty() {
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
    wo.subresource = match req.sub {
        Sub::None => "",
        Sub::Status => "status",
        Sub::Scale => "scale",
    };
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
    let refuse = |field: &str, reason: &str, message: &str| {
        let mut e = ApiError::invalid_options("PatchOptions", field, message);
        if let Some(cause) = e.details.causes.first_mut() {
            cause.reason = reason.into();
        }
        Err(e)
    };
    if kind == PatchKind::Apply && req.query.get("fieldManager").is_none_or(str::is_empty) {
        return refuse(
            "fieldManager",
            "FieldValueRequired",
            "Required value: is required for apply patch",
        );
    }
    if kind != PatchKind::Apply && req.query.get("force").is_some() {
        return refuse(
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch",
        );
    }
    let patch_doc = if kind == PatchKind::Apply {
        crate::api::apply::decode_config(body)?
    } else {
        decode_json(&req.info, body)?
    };
    Ok((wo, kind, patch_doc))
}
