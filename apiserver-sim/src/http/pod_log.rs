//! `GET /api/v1/namespaces/<ns>/pods/<name>/log`: the log of one of a pod's containers as
//! `text/plain` (what the simulated container wrote, see the workload simulator), with the
//! API server's errors for a missing pod or container.

use http::{Method, Response};

use super::respond::{self, Body};
use crate::api::route::Route;
use crate::controllers::workloads::container_log::{LogOptions, pod_log};
use crate::machinery::query::Query;
use crate::machinery::status::{ApiError, ApiResult};
use crate::shared::Shared;

/// Whether `route` names a pod's log.
pub(super) fn is_log(route: &Route) -> bool {
    matches!(route, Route::Resource(rp)
        if rp.group.is_empty() && rp.plural == "pods" && rp.subresource.as_deref() == Some("log"))
}

/// The response to a `pods/log` request, or `None` for any other request.
pub(super) fn serve(
    shared: &Shared,
    method: &Method,
    route: &Route,
    query: &Query,
) -> Option<Response<Body>> {
    let Route::Resource(rp) = route else {
        return None;
    };
    if !is_log(route) {
        return None;
    }
    Some(match answer(shared, method, rp, query) {
        Ok(text) => respond::text(200, &text),
        Err(e) => respond::error(&e),
    })
}

fn answer(
    shared: &Shared,
    method: &Method,
    rp: &crate::api::route::ResourcePath,
    query: &Query,
) -> ApiResult<String> {
    let (Some(ns), Some(name)) = (rp.namespace.as_deref(), rp.name.as_deref()) else {
        return Err(ApiError::unknown_path());
    };
    if method != Method::GET {
        return Err(ApiError::method_not_allowed());
    }
    let opts = LogOptions {
        container: query.get("container").unwrap_or("").to_string(),
        previous: query.flag("previous"),
        timestamps: query.flag("timestamps"),
        tail_lines: query.uint("tailLines")?.map(|n| n as usize),
        limit_bytes: query.uint("limitBytes")?.map(|n| n as usize),
    };
    let st = shared.state.lock();
    let info = st
        .lookup("", &rp.version, "pods")
        .ok_or_else(ApiError::unknown_path)?;
    let pod = st
        .get(&info.key(), &(ns.to_string(), name.to_string()))
        .ok_or_else(|| ApiError::not_found(&info, name))?;
    pod_log(&pod, name, &opts)
}
