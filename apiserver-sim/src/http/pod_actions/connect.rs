//! `exec`, `attach`, `portforward` and `proxy` of a pod. Upstream finds the pod's node and
//! its kubelet's address before it upgrades the connection (or, for `proxy`, the pod's IP),
//! and answers each missing step with its own error; the simulator gives those answers, and
//! for a pod it could reach, says it runs no kubelet and no pod servers.

use http::{HeaderMap, Method, Response, header};
use serde_json::Value;

use super::Target;
use crate::http::respond::Body;
use crate::machinery::pointer::text;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// `exec`, `attach`, `portforward`: GET or POST, on a scheduled pod whose node has an
/// address, as a connection upgrade.
pub(super) fn connect(
    st: &State,
    at: &Target<'_>,
    method: &Method,
    headers: &HeaderMap,
) -> ApiResult<Response<Body>> {
    if method != Method::GET && method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let pod = at.pod(st)?;
    let node_name = text(&pod, "/spec/nodeName");
    if node_name.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {} does not have a host assigned",
            at.name
        )));
    }
    let node = st
        .lookup("", "v1", "nodes")
        .and_then(|nodes| st.get(&nodes.key(), &(String::new(), node_name.to_string())));
    let Some(node) = node else {
        // Upstream's node lookup reports a missing node as a missing pod.
        return Err(ApiError::not_found(at.pods, node_name));
    };
    let addresses = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !addresses {
        return Err(ApiError::new(
            500,
            "",
            "no preferred addresses found; known addresses: []",
        ));
    }
    let upgrade = headers
        .get(header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("upgrade"));
    if !upgrade {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    Err(ApiError::new(
        500,
        "",
        format!("error dialing backend: node {node_name}: the simulator runs no kubelet"),
    ))
}

/// `proxy`: any of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, to the pod's IP.
pub(super) fn proxy(st: &State, at: &Target<'_>, method: &Method) -> ApiResult<Response<Body>> {
    let allowed = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
    ];
    if !allowed.contains(method) {
        return Err(ApiError::method_not_allowed());
    }
    // `name:port` and `scheme:name:port` address a port of the pod.
    let parts: Vec<&str> = at.name.split(':').collect();
    let name = match parts.as_slice() {
        [_, name, _] => name,
        [name, ..] => name,
        [] => at.name,
    };
    let pod = Target { name, ..*at }.pod(st)?;
    let ip = text(&pod, "/status/podIP");
    if ip.is_empty() {
        return Err(ApiError::bad_request("address not allowed"));
    }
    Err(ApiError::new(
        503,
        "ServiceUnavailable",
        format!(
            "error trying to reach service: pod {name} at {ip}: the simulator runs no pod servers"
        ),
    ))
}
