//! Reads of stored objects for get, list and watch: the object, a page of a list, a watch
//! stream (in the version asked for).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::request::{Req, okey};
use crate::api::repr::Repr;
use crate::api::table::TableWriter;
use crate::machinery::query::{ListOptions, parse_rv};
use crate::machinery::status::{ApiError, ApiResult};
use crate::shared::{Shared, WatchListMode};
use crate::store::Stored;

/// The object a get reads, as stored.
pub(super) fn fetch(shared: &Shared, req: &Req) -> ApiResult<Arc<Value>> {
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
    Ok(obj)
}

/// The objects (as stored) and list metadata a list answers with.
pub(super) fn list_page(shared: &Shared, req: &Req) -> ApiResult<(Vec<Stored>, Value)> {
    let mut opts = ListOptions::parse(req.query, &req.info)?;
    if shared.config.watch_cache
        && req.query.get("resourceVersion") == Some("0")
        && opts.continue_token.is_none()
    {
        // kube-apiserver's watch cache serves this list whole, ignoring the limit.
        opts.limit = 0;
    }
    let page = shared.state.lock().list(&req.info.key(), req.ns, &opts)?;
    let mut md = json!({"resourceVersion": page.rv.to_string()});
    if let Some(c) = &page.continue_token {
        md["continue"] = json!(c);
    }
    if let Some(r) = page.remaining {
        md["remainingItemCount"] = json!(r);
    }
    Ok((page.items, md))
}

/// The watch a request asks for, its objects in `version` and its events in the request's
/// format.
pub(super) fn watch_stream(
    shared: &Arc<Shared>,
    req: &Req,
    version: &str,
) -> ApiResult<impl futures::Stream<Item = Bytes> + Send + 'static> {
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
        opts.selectors.fields = crate::machinery::selector::FieldSelector::parse(
            &sel,
            &req.info.group,
            &req.info.plural,
        )?;
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
    crate::watch::stream::start(
        shared.clone(),
        req.info.clone(),
        version,
        req.ns.map(str::to_string),
        opts,
        req.repr,
        req.format,
        table,
    )
}
