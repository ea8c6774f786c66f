//! Responses to resource requests: an object or a list in the negotiated representation (a
//! `Table`, `PartialObjectMetadata`, the full object) and encoding (JSON, or protobuf
//! through [`super::wire`]), and what a DELETE answers.

use bytes::{BufMut, BytesMut};
use http::{HeaderValue, Response, header};
use serde_json::{Value, json};

use super::request::Req;
use super::respond::{self, Body};
use crate::api::repr::{self, Repr};
use crate::api::table::TableWriter;
use crate::machinery::meta;
use crate::machinery::status::ApiResult;
use crate::ops::{DeleteOptions, Deleted};
use crate::store::Stored;

/// One object in the request's representation and encoding.
pub(super) fn object_response(code: u16, req: &Req, obj: &Value) -> ApiResult<Response<Body>> {
    if let Repr::Table(v) = req.repr {
        let w = TableWriter::new(req.info.clone(), req.version, v, req.query)?;
        return Ok(respond::raw_json(code, &w.object(obj, true)));
    }
    if let Some(r) = super::wire::object(code, req, obj) {
        return Ok(r);
    }
    let mut r = respond::raw_json(code, &repr::render(&req.info, req.version, obj, req.repr));
    if req.repr == Repr::Metadata {
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(repr::METADATA_CT),
        );
    }
    Ok(r)
}

/// A list in the request's representation and encoding.
pub(super) fn list_response(req: &Req, items: &[Stored], md: Value) -> ApiResult<Response<Body>> {
    if let Repr::Table(v) = req.repr {
        let w = TableWriter::new(req.info.clone(), req.version, v, req.query)?;
        let table = w.list(items.iter().map(|s| (&*s.obj, &s.json)), &md);
        return Ok(respond::raw_json(200, &table));
    }
    if let Some(r) = super::wire::list(req, items, &md) {
        return Ok(r);
    }
    let mut buf = BytesMut::with_capacity(64 + items.len() * 256);
    let (api_version, kind) = repr::type_meta(&req.info, req.version, req.repr, true);
    let head = json!({"apiVersion": api_version, "kind": kind, "metadata": md});
    let head = serde_json::to_vec(&head).unwrap_or_default();
    // Reopen the head object to append "items".
    buf.extend_from_slice(&head[..head.len().saturating_sub(1)]);
    buf.extend_from_slice(b",\"items\":[");
    // Upstream's items of a built-in kind carry no type meta; a custom resource's do.
    let bare_items = req.repr == Repr::Full && req.info.builtin;
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            buf.put_u8(b',');
        }
        let item = repr::render_cached(&req.info, req.version, &it.obj, &it.json, req.repr);
        if bare_items {
            crate::api::list_items::append_without_type_meta(&item, &mut buf);
        } else {
            buf.extend_from_slice(&item);
        }
    }
    buf.extend_from_slice(b"]}");
    let mut r = respond::raw_json(200, &buf);
    if req.repr == Repr::Metadata {
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(repr::METADATA_LIST_CT),
        );
    }
    Ok(r)
}

/// What a DELETE answers: the object (marked, or removed for types that return it) or a
/// Success `Status`.
pub(super) fn deleted_response(
    req: &Req,
    opts: &DeleteOptions,
    out: Deleted,
) -> ApiResult<Response<Body>> {
    let name = req.name.unwrap_or("");
    match out {
        Deleted::Marked(obj) => {
            object_response(if opts.explicit_no_orphan { 202 } else { 200 }, req, &obj)
        }
        Deleted::Removed(obj) if req.info.delete_returns_object => object_response(200, req, &obj),
        Deleted::Removed(obj) => {
            let mut details =
                json!({"name": name, "kind": req.info.plural, "uid": meta::uid(&obj)});
            if !req.info.group.is_empty() {
                details["group"] = json!(req.info.group);
            }
            Ok(super::wire::value(
                200,
                req,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
            ))
        }
    }
}
