//! The pod subresources that are actions rather than parts of the pod, answered as a bare
//! kube-apiserver answers them: `binding` (assign a node), `eviction` (a deletion that
//! honours PodDisruptionBudgets), and the connections to a pod's kubelet or to the pod
//! (`exec`, `attach`, `portforward`, `proxy`), which the simulator, running no kubelet and
//! no pod servers, refuses as upstream refuses them when it cannot reach them.

mod binding;
mod connect;
mod eviction;

use std::sync::Arc;

use http::{HeaderMap, Method, Response};
use serde_json::{Value, json};

use super::respond::{self, Body};
use crate::api::route::{ResourcePath, Route};
use crate::machinery::meta;
use crate::machinery::query::Query;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::shared::Shared;
use crate::store::State;

/// The subresources served here.
const ACTIONS: [&str; 6] = [
    "binding",
    "eviction",
    "exec",
    "attach",
    "portforward",
    "proxy",
];

/// The pod action `route` names, if it names one: its path, namespace and pod name.
fn action(route: &Route) -> Option<(&ResourcePath, &str, &str, &str)> {
    let Route::Resource(rp) = route else {
        return None;
    };
    let sub = rp.subresource.as_deref()?;
    if !rp.group.is_empty() || rp.plural != "pods" || !ACTIONS.contains(&sub) {
        return None;
    }
    Some((rp, rp.namespace.as_deref()?, rp.name.as_deref()?, sub))
}

/// The response to a pod action, or `None` for any other request.
pub(super) fn serve(
    shared: &Arc<Shared>,
    method: &Method,
    route: &Route,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response<Body>> {
    let (rp, ns, name, sub) = action(route)?;
    let answer = {
        let mut st = shared.state.lock();
        match st.lookup("", &rp.version, "pods") {
            None => Err(ApiError::unknown_path()),
            Some(pods) => {
                let at = Target {
                    pods: &pods,
                    ns,
                    name,
                };
                match sub {
                    "binding" => binding::bind(&mut st, &at, method, query, body),
                    "eviction" => eviction::evict(&mut st, &at, method, query, body),
                    "proxy" => connect::proxy(&st, &at, method),
                    _ => connect::connect(&st, &at, method, headers),
                }
            }
        }
    };
    Some(match answer {
        Ok(r) => r,
        Err(e) => respond::error(&e),
    })
}

/// The pod an action addresses.
#[derive(Clone, Copy)]
struct Target<'a> {
    pods: &'a ResourceInfo,
    ns: &'a str,
    name: &'a str,
}

impl Target<'_> {
    /// The stored pod, or upstream's 404.
    fn pod(&self, st: &State) -> ApiResult<Arc<Value>> {
        st.get(
            &self.pods.key(),
            &(self.ns.to_string(), self.name.to_string()),
        )
        .ok_or_else(|| ApiError::not_found(self.pods, self.name))
    }
}

/// The `Status` a successful action answers with (201).
fn created() -> Response<Body> {
    respond::json(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// An action's JSON body of `kind` (Binding, Eviction): an object of that kind, or upstream's
/// 400 for a body that is not JSON or is another kind.
/// The body of a POST to the pod `at`'s subresource as the `kind` object (of one of
/// `versions`) it must be, naming that pod, and whether the request is a dry run.
fn posted(
    at: &Target<'_>,
    method: &Method,
    query: &Query,
    body: &[u8],
    kind: &str,
    versions: &[&str],
) -> ApiResult<(Value, bool)> {
    if method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let dry_run = crate::ops::WriteOptions::parse(query)?.dry_run;
    let object = body_of(body, kind, versions)?;
    if meta::name(&object) != at.name {
        return Err(ApiError::bad_request(format!(
            "name in URL does not match name in {kind} object"
        )));
    }
    Ok((object, dry_run))
}

fn body_of(body: &[u8], kind: &str, versions: &[&str]) -> ApiResult<Value> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {e}"
        ))
    })?;
    let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, got) = (text("apiVersion"), text("kind"));
    if !v.is_object() || (got != kind && !got.is_empty()) || !versions.contains(&api_version) {
        let version = api_version.rsplit('/').next().unwrap_or("");
        return Err(ApiError::bad_request(format!(
            "{got} in version \"{version}\" cannot be handled as a {kind}: converting ({version}.{got}) to ({}.{kind}): unknown conversion",
            if kind == "Eviction" { "policy" } else { "core" }
        )));
    }
    Ok(v)
}
