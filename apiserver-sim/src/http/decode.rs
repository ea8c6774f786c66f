//! Decoding a write request: its body, its write options (field manager, ownership), and a
//! PATCH's type and document.

use http::{HeaderMap, header};
use serde_json::Value;

use super::request::{Req, Sub};
use crate::api::patch::PatchKind;
use crate::api::query::{Ownership, WriteOptions};
use crate::api::status::{ApiError, ApiResult};
use crate::kinds::resource_info::ResourceInfo;

/// The request body as JSON (protobuf bodies decoded for the types that accept them).
pub(super) fn parse_body(
    info: &ResourceInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Value> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let base = crate::api::repr::media_type(ct);
    if base == crate::api::protobuf::PROTOBUF {
        return crate::api::protobuf::decode(info, body);
    }
    if !(base.is_empty() || base == "application/json" || base == "*/*") {
        return Err(ApiError::unsupported_media_type(ct, &["application/json"]));
    }
    decode_json(info, body)
}

/// A JSON body, or 400 naming the kind it should have been.
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
