//! The verbs on resource endpoints: get, list, watch, create, update, patch, delete and
//! deletecollection, on objects and on their status and scale subresources.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Method, Response, header};
use serde_json::{Value, json};

use super::request::{Req, Sub, Verb, okey, verb_for};
use super::respond::{self, Body};
use super::route::ResourcePath;
use super::scale::{scale_of, write_scale};
use crate::api::accept;
use crate::api::meta;
use crate::api::patch::PatchKind;
use crate::api::query::{ListOptions, Query, WriteOptions, parse_rv};
use crate::api::repr::{self, Repr};
use crate::api::status::{ApiError, ApiResult};
use crate::api::table::TableWriter;
use crate::kinds::resource_info::ResourceInfo;
use crate::ops::{self, DeleteOptions, Deleted};
use crate::shared::{Shared, WatchListMode};
use crate::store::Stored;

fn object_response(code: u16, req: &Req, obj: &Value) -> ApiResult<Response<Body>> {
    if let Repr::Table(v) = req.repr {
        let w = TableWriter::new(req.info.clone(), req.version, v, req.query)?;
        return Ok(respond::raw_json(code, &w.object(obj, true)));
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

fn list_response(req: &Req, items: &[Stored], md: Value) -> ApiResult<Response<Body>> {
    if let Repr::Table(v) = req.repr {
        let w = TableWriter::new(req.info.clone(), req.version, v, req.query)?;
        let table = w.list(items.iter().map(|s| (&*s.obj, &s.json)), &md);
        return Ok(respond::raw_json(200, &table));
    }
    let mut buf = BytesMut::with_capacity(64 + items.len() * 256);
    let (api_version, kind) = repr::type_meta(&req.info, req.version, req.repr, true);
    let head = json!({"apiVersion": api_version, "kind": kind, "metadata": md});
    let head = serde_json::to_vec(&head).unwrap_or_default();
    // Reopen the head object to append "items".
    buf.extend_from_slice(&head[..head.len().saturating_sub(1)]);
    buf.extend_from_slice(b",\"items\":[");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            buf.put_u8(b',');
        }
        buf.extend_from_slice(&repr::render_cached(
            &req.info,
            req.version,
            &it.obj,
            &it.json,
            req.repr,
        ));
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

fn parse_body(info: &ResourceInfo, headers: &HeaderMap, body: &[u8]) -> ApiResult<Value> {
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

fn decode_json(info: &ResourceInfo, body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {e}",
            info.kind,
            info.storage_version(),
            info.kind
        ))
    })
}

/// Entry point for resource paths.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    method: &Method,
    rp: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    body: Bytes,
) -> Response<Body> {
    match dispatch(shared, method, rp, query, headers, body) {
        Ok(r) => r,
        Err(e) => respond::error(&e),
    }
}

fn dispatch(
    shared: &Arc<Shared>,
    method: &Method,
    rp: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    body: Bytes,
) -> ApiResult<Response<Body>> {
    let info = shared
        .state
        .lock()
        .lookup(&rp.group, &rp.version, &rp.plural)
        .ok_or_else(ApiError::unknown_path)?;
    if (!info.namespaced && rp.namespace.is_some())
        || (info.namespaced && rp.namespace.is_none() && rp.name.is_some())
    {
        return Err(ApiError::unknown_path());
    }
    let sub = match rp.subresource.as_deref() {
        None => Sub::None,
        Some("status") if info.status_subresource => Sub::Status,
        Some("scale") if info.scale.is_some() => Sub::Scale,
        Some("finalize") if info.group.is_empty() && info.plural == "namespaces" => Sub::None,
        Some(_) => return Err(ApiError::unknown_path()),
    };
    let all_ns = info.namespaced && rp.namespace.is_none();
    let verb = verb_for(method, rp, query, all_ns)?;
    if sub != Sub::None && !matches!(verb, Verb::Get | Verb::Update | Verb::Patch) {
        return Err(ApiError::method_not_allowed());
    }
    let injected = shared.faults.lock().take(verb.as_str(), &info.plural);
    if let Some(f) = injected {
        let err = ApiError::injected(f.code, f.retry_after);
        if f.in_band && verb == Verb::Watch {
            let line = crate::watch::line::error_line(&err);
            return Ok(respond::stream(futures::stream::iter([line])));
        }
        return Err(err);
    }
    let repr = accept::negotiate(
        headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()),
        info.builtin,
    )?;
    let req = Req {
        info,
        version: &rp.version,
        ns: rp.namespace.as_deref(),
        name: rp.name.as_deref(),
        sub,
        query,
        repr,
    };
    match verb {
        Verb::Get => get(shared, &req),
        Verb::List => list(shared, &req),
        Verb::Watch => watch(shared, &req),
        Verb::Create => create(shared, &req, headers, &body),
        Verb::Update => update(shared, &req, headers, &body),
        Verb::Patch => patch(shared, &req, headers, &body),
        Verb::Delete => delete(shared, &req, &body),
        Verb::DeleteCollection => delete_collection(shared, &req, &body),
    }
}

fn get(shared: &Shared, req: &Req) -> ApiResult<Response<Body>> {
    let rv = parse_rv(req.query.get("resourceVersion"))?;
    let name = req.name.unwrap_or("");
    let obj = {
        let st = shared.state.lock();
        if let Some(rv) = rv
            && rv > st.rv
        {
            return Err(crate::store::snapshot::too_large(rv, st.rv));
        }
        st.get(&req.info.key(), &okey(req))
    }
    .ok_or_else(|| ApiError::not_found(&req.info, name))?;
    if req.sub == Sub::Scale {
        let scale = scale_of(&req.info, &obj);
        if let Repr::Table(v) = req.repr {
            let w = TableWriter::for_scale(req.info.clone(), req.version, v, req.query)?;
            return Ok(respond::raw_json(200, &w.object(&scale, true)));
        }
        return Ok(respond::json(200, &scale));
    }
    object_response(200, req, &obj)
}

fn list(shared: &Shared, req: &Req) -> ApiResult<Response<Body>> {
    let opts = ListOptions::parse(req.query, &req.info)?;
    let page = shared.state.lock().list(&req.info.key(), req.ns, &opts)?;
    let mut md = json!({"resourceVersion": page.rv.to_string()});
    if let Some(c) = &page.continue_token {
        md["continue"] = json!(c);
    }
    if let Some(r) = page.remaining {
        md["remainingItemCount"] = json!(r);
    }
    list_response(req, &page.items, md)
}

fn watch(shared: &Arc<Shared>, req: &Req) -> ApiResult<Response<Body>> {
    let mut opts = ListOptions::parse(req.query, &req.info)?;
    if opts.send_initial_events.is_some() {
        match shared.watch_list_mode() {
            WatchListMode::Supported => {}
            WatchListMode::Rejected => {
                return Err(ApiError::invalid_options(
                    "ListOptions",
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                ));
            }
            WatchListMode::Ignored => {
                // A server that predates WatchList knows neither parameter.
                opts.send_initial_events = None;
                opts.rv_match = None;
            }
        }
    }
    if let Some(name) = req.name {
        // `/.../name?watch=1` is a watch with a metadata.name field selector.
        let sel = format!("metadata.name={name}");
        opts.selectors.fields =
            crate::api::selector::FieldSelector::parse(&sel, &req.info.group, &req.info.plural)?;
    }
    let table = match req.repr {
        Repr::Table(v) => Some(TableWriter::new(
            req.info.clone(),
            req.version,
            v,
            req.query,
        )?),
        _ => None,
    };
    let s = crate::watch::stream::start(
        shared.clone(),
        req.info.clone(),
        req.version,
        req.ns.map(str::to_string),
        opts,
        req.repr,
        table,
    )?;
    Ok(respond::stream(s))
}

fn create(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let wo = WriteOptions::parse(req.query)?;
    let obj = parse_body(&req.info, headers, body)?;
    let stored = ops::create(
        &mut shared.state.lock(),
        &req.info,
        req.version,
        req.ns,
        obj,
        &wo,
    )?;
    object_response(201, req, &stored)
}

fn update(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let wo = WriteOptions::parse(req.query)?;
    let name = req.name.unwrap_or("");
    if req.sub == Sub::Scale {
        let scale = parse_body(&req.info, headers, body)?;
        return write_scale(shared, req, scale, &wo);
    }
    let obj = parse_body(&req.info, headers, body)?;
    let part = req.sub.part();
    let stored = ops::update(
        &mut shared.state.lock(),
        &req.info,
        req.version,
        req.ns,
        name,
        obj,
        part,
        &wo,
    )?;
    object_response(200, req, &stored)
}

fn patch(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let wo = WriteOptions::parse(req.query)?;
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let kind = PatchKind::from_content_type(ct, req.info.builtin)?;
    if kind == PatchKind::Apply && req.query.get("fieldManager").is_none_or(str::is_empty) {
        return Err(ApiError::invalid_options(
            "PatchOptions",
            "fieldManager",
            "Required value: is required for apply patch",
        ));
    }
    if kind != PatchKind::Apply && req.query.get("force").is_some() {
        return Err(ApiError::invalid_options(
            "PatchOptions",
            "force",
            "Forbidden: may not be specified for non-apply patch",
        ));
    }
    let patch_doc = decode_json(&req.info, body)?;
    let name = req.name.unwrap_or("");
    if req.sub == Sub::Scale {
        let current = {
            let st = shared.state.lock();
            st.get(&req.info.key(), &okey(req))
        }
        .ok_or_else(|| ApiError::not_found(&req.info, name))?;
        let scale =
            crate::api::patch::apply(kind, &scale_of(&req.info, &current), &patch_doc, true)?;
        return write_scale(shared, req, scale, &wo);
    }
    let part = req.sub.part();
    let out = ops::patch(
        &mut shared.state.lock(),
        &req.info,
        req.version,
        req.ns,
        name,
        kind,
        &patch_doc,
        part,
        &wo,
    )?;
    let code = if out.created { 201 } else { 200 };
    object_response(code, req, &out.obj)
}

fn delete(shared: &Shared, req: &Req, body: &[u8]) -> ApiResult<Response<Body>> {
    let opts = DeleteOptions::parse(body, req.query)?;
    let name = req.name.unwrap_or("");
    let out = ops::delete(
        &mut shared.state.lock(),
        &req.info,
        req.ns.unwrap_or(""),
        name,
        &opts,
    )?;
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
            Ok(respond::json(
                200,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
            ))
        }
    }
}

fn delete_collection(shared: &Shared, req: &Req, body: &[u8]) -> ApiResult<Response<Body>> {
    let opts = DeleteOptions::parse(body, req.query)?;
    let mut lo = ListOptions::parse(req.query, &req.info)?;
    lo.limit = 0;
    lo.continue_token = None;
    let mut affected = Vec::new();
    let rv;
    {
        let mut st = shared.state.lock();
        let page = st.list(&req.info.key(), req.ns, &lo)?;
        for stored in page.items {
            let obj = stored.obj;
            let ns = meta::namespace(&obj).to_string();
            match ops::delete(&mut st, &req.info, &ns, meta::name(&obj), &opts) {
                Ok(Deleted::Marked(o) | Deleted::Removed(o)) => affected.push(Stored::new(o)),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        rv = st.rv;
    }
    list_response(req, &affected, json!({"resourceVersion": rv.to_string()}))
}
