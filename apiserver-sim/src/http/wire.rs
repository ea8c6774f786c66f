//! Responses in protobuf, for requests whose negotiated [`Format`] is protobuf: objects,
//! lists, other values (a `Scale`, a success `Status`) and errors. JSON responses are
//! built by the verbs themselves.

use std::borrow::Cow;

use http::Response;
use serde_json::{Value, json};

use super::request::Req;
use super::respond::{self, Body};
use crate::api::format::Format;
use crate::api::format::PROTOBUF;
use crate::api::protobuf;
use crate::api::repr::{self, Repr};
use crate::machinery::status::ApiError;
use crate::store::Stored;

/// An object as it goes out in the request's representation.
fn view<'a>(req: &Req, obj: &'a Value) -> Cow<'a, Value> {
    match req.repr {
        Repr::Metadata => Cow::Owned(json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        })),
        _ if req.info.as_stored(req.version) => Cow::Borrowed(obj),
        _ => Cow::Owned(req.info.to_served(req.version, obj)),
    }
}

/// One object in protobuf (None when the request wants JSON, or the type has no protobuf
/// form).
pub(super) fn object(code: u16, req: &Req, obj: &Value) -> Option<Response<Body>> {
    if req.format != Format::Protobuf {
        return None;
    }
    let (api_version, kind) = repr::type_meta(&req.info, req.version, req.repr, false);
    let doc = protobuf::encode_object(&api_version, &kind, &view(req, obj))?;
    Some(respond::bytes(code, PROTOBUF, doc))
}

/// A list in protobuf (see [`object`]).
pub(super) fn list(req: &Req, items: &[Stored], md: &Value) -> Option<Response<Body>> {
    if req.format != Format::Protobuf {
        return None;
    }
    let (api_version, list_kind) = repr::type_meta(&req.info, req.version, req.repr, true);
    let (_, item_kind) = repr::type_meta(&req.info, req.version, req.repr, false);
    let views: Vec<Cow<Value>> = items.iter().map(|s| view(req, &s.obj)).collect();
    let doc = protobuf::encode_list(
        &api_version,
        &list_kind,
        &item_kind,
        md,
        views.iter().map(|v| v.as_ref()),
    )?;
    Some(respond::bytes(200, PROTOBUF, doc))
}

/// Any other value of a known type (`autoscaling/v1` `Scale`, `v1` `Status`) in the
/// request's format.
pub(super) fn value(code: u16, req: &Req, v: &Value) -> Response<Body> {
    if req.format == Format::Protobuf {
        let av = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        if let Some(doc) = protobuf::encode_object(av, kind, v) {
            return respond::bytes(code, PROTOBUF, doc);
        }
    }
    respond::json(code, v)
}

/// An error, in protobuf when the client asked for protobuf first.
pub(super) fn error(accept: Option<&str>, e: &ApiError) -> Response<Body> {
    if Format::prefers_protobuf(accept) {
        respond::protobuf_error(e)
    } else {
        respond::error(e)
    }
}
