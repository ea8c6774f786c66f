//! The verbs on resource endpoints: get, list, watch, create, update, patch, delete and
//! deletecollection, on objects and on their status and scale subresources.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, header};
use serde_json::json;

use super::decode::{json_body, parse_body, patch_input, write_options};
use super::reads::{fetch, list_page, watch_stream};
use super::render::{deleted_response, list_response, object_response};
use super::request::{Req, Sub, Verb, okey, verb_for};
use super::respond::{self, Body};
use super::scale::{scale_of, write_scale};
use crate::api::accept;
use crate::api::format::Format;
use crate::api::patch::PatchKind;
use crate::api::repr::Repr;
use crate::api::route::ResourcePath;
use crate::api::table::TableWriter;
use crate::auth::identity::Identity;
use crate::machinery::meta;
use crate::machinery::query::{ListOptions, Query};
use crate::machinery::status::{ApiError, ApiResult};
use crate::ops::{self, DeleteOptions, Deleted, OwnerRefsAdmission, validate};
use crate::shared::Shared;
use crate::store::Stored;

/// Entry point for resource paths.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    method: &Method,
    rp: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    who: &Identity,
    body: Bytes,
) -> Response<Body> {
    match dispatch(shared, method, rp, query, headers, who, body).await {
        Ok(r) => r,
        Err(e) => {
            // Errors go out in protobuf when the client prefers it and the resource has a
            // protobuf form (JSON otherwise, and for a failed negotiation).
            let protobuf_ok = e.code != 406
                && shared
                    .state
                    .lock()
                    .lookup(&rp.group, &rp.version, &rp.plural)
                    .is_some_and(|info| crate::api::protobuf::supports(&info, &rp.version));
            let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
            super::wire::error(accept.filter(|_| protobuf_ok), &e)
        }
    }
}

/// Whether `info` is core/v1 pods.
fn is_pods(info: &crate::machinery::resource_info::ResourceInfo) -> bool {
    info.builtin && info.group.is_empty() && info.plural == "pods"
}

async fn dispatch(
    shared: &Arc<Shared>,
    method: &Method,
    rp: &ResourcePath,
    query: &Query,
    headers: &HeaderMap,
    who: &Identity,
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
        Some("ephemeralcontainers") if is_pods(&info) => Sub::EphemeralContainers,
        Some("resize") if is_pods(&info) => Sub::Resize,
        Some(_) => return Err(ApiError::unknown_path()),
    };
    let all_ns = info.namespaced && rp.namespace.is_none();
    let verb = verb_for(method, rp, query, all_ns)?;
    if sub != Sub::None && !matches!(verb, Verb::Get | Verb::Update | Verb::Patch) {
        return Err(ApiError::method_not_allowed());
    }
    if sub == Sub::None && rp.subresource.is_none() && !info.has_verb(verb.as_str()) {
        return Err(ApiError::method_not_allowed());
    }
    let injected =
        shared
            .faults
            .lock()
            .take_in(verb.as_str(), &info.plural, rp.namespace.as_deref());
    if let Some(f) = injected {
        let err = ApiError::injected(f.code, f.retry_after);
        if f.in_band && verb == Verb::Watch {
            let line = crate::api::watch_line::error_line(&err);
            return Ok(respond::stream(futures::stream::iter([line])));
        }
        return Err(err);
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let protobuf_ok = crate::api::protobuf::supports(&info, &rp.version);
    let (repr, format) = accept::negotiate(accept, protobuf_ok)?;
    let req = Req {
        info,
        version: &rp.version,
        ns: rp.namespace.as_deref(),
        name: rp.name.as_deref(),
        sub,
        query,
        repr,
        format,
        owner_refs: (shared.auth.enabled && shared.auth.owner_references_enforced)
            .then(|| OwnerRefsAdmission::new(who.clone(), Arc::clone(&shared.auth.denials))),
    };
    // Admission webhooks and conversion webhooks, when configured for this request.
    if let Some(r) = super::admitted::serve(shared, &req, verb, headers, &body).await {
        return Ok(r);
    }
    match verb {
        Verb::Get => get(shared, &req),
        Verb::List => list(shared, &req),
        Verb::Watch => watch(shared, &req),
        Verb::Create | Verb::Update => write(shared, &req, verb, headers, &body),
        Verb::Patch => patch(shared, &req, headers, &body),
        Verb::Delete => delete(shared, &req, headers, &body),
        Verb::DeleteCollection => delete_collection(shared, &req, headers, &body),
    }
}

fn get(shared: &Shared, req: &Req) -> ApiResult<Response<Body>> {
    let obj = fetch(shared, req)?;
    if req.sub == Sub::Scale {
        let scale = scale_of(&req.info, &obj);
        if let Repr::Table(v) = req.repr {
            let w = TableWriter::for_scale(req.info.clone(), req.version, v, req.query)?;
            return Ok(respond::raw_json(200, &w.object(&scale, true)));
        }
        return Ok(super::wire::value(200, req, &scale));
    }
    object_response(200, req, &obj)
}

fn list(shared: &Shared, req: &Req) -> ApiResult<Response<Body>> {
    let (items, md) = list_page(shared, req)?;
    list_response(req, &items, md)
}

fn watch(shared: &Arc<Shared>, req: &Req) -> ApiResult<Response<Body>> {
    let s = watch_stream(shared, req, req.version)?;
    Ok(match req.format {
        Format::Json => respond::stream(s),
        Format::Protobuf => respond::stream_as(crate::api::protobuf::WATCH_CONTENT_TYPE, s),
    })
}

/// CREATE (201) and UPDATE (200): the body parsed and written, answered with the warnings
/// about fields the kind does not know.
fn write(
    shared: &Shared,
    req: &Req,
    verb: Verb,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let wo = write_options(req, headers)?;
    let obj = parse_body(&req.info, req.version, headers, body)?;
    if req.sub == Sub::Scale {
        return write_scale(shared, req, obj, &wo);
    }
    let warnings =
        validate::unknown_field_warnings(&req.info, req.version, &obj, wo.field_validation);
    let (code, stored) = {
        let st = &mut shared.state.lock();
        let (info, version) = (&req.info, req.version);
        match verb {
            Verb::Create => (201, ops::create(st, info, version, req.ns, obj, &wo)?),
            _ => {
                let name = req.name.unwrap_or("");
                let part = req.sub.part();
                let stored = ops::update(st, info, version, req.ns, name, obj, part, &wo)?;
                (200, stored)
            }
        }
    };
    let mut r = object_response(code, req, &stored)?;
    super::admitted::add_warnings(&mut r, &warnings);
    Ok(r)
}

fn patch(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let (wo, kind, patch_doc) = patch_input(req, headers, body)?;
    let name = req.name.unwrap_or("");
    if req.sub == Sub::Scale {
        let current = {
            let st = shared.state.lock();
            st.get(&req.info.key(), &okey(req))
        }
        .ok_or_else(|| ApiError::not_found(&req.info, name))?;
        let scale = crate::api::patch::apply(
            kind,
            &scale_of(&req.info, &current),
            &patch_doc,
            crate::kinds::patch_strategies::root("autoscaling", "v1", "Scale"),
        )?;
        return write_scale(shared, req, scale, &wo);
    }
    let part = req.sub.part();
    let mut st = shared.state.lock();
    let warnings = patch_warnings(&st, req, kind, &patch_doc, &wo);
    let out = ops::patch(
        &mut st,
        &req.info,
        req.version,
        req.ns,
        name,
        kind,
        &patch_doc,
        part,
        &wo,
    )?;
    drop(st);
    let code = if out.created { 201 } else { 200 };
    let mut r = object_response(code, req, &out.obj)?;
    super::admitted::add_warnings(&mut r, &warnings);
    Ok(r)
}

/// The unknown-field warnings of a patch to a custom resource (its patched object's fields the
/// schema does not know, `Warn` only); none for built-in kinds, applies and new objects.
fn patch_warnings(
    st: &crate::store::State,
    req: &Req,
    kind: PatchKind,
    patch_doc: &serde_json::Value,
    wo: &ops::WriteOptions,
) -> Vec<String> {
    if req.info.builtin
        || kind == PatchKind::Apply
        || wo.field_validation != ops::FieldValidation::Warn
    {
        return Vec::new();
    }
    let Some(current) = st.get(&req.info.key(), &okey(req)) else {
        return Vec::new();
    };
    let served = req.info.to_served(req.version, &current);
    ops::patched(&req.info, req.version, &served, kind, patch_doc)
        .map(|patched| {
            validate::unknown_field_warnings(&req.info, req.version, &patched, wo.field_validation)
        })
        .unwrap_or_default()
}

fn delete(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let body = json_body(headers, body)?;
    let opts = DeleteOptions::parse(&body, req.query)?;
    let name = req.name.unwrap_or("");
    let out = ops::delete(
        &mut shared.state.lock(),
        &req.info,
        req.ns.unwrap_or(""),
        name,
        &opts,
    )?;
    deleted_response(req, &opts, out)
}

fn delete_collection(
    shared: &Shared,
    req: &Req,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let body = json_body(headers, body)?;
    let opts = DeleteOptions::parse(&body, req.query)?;
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
