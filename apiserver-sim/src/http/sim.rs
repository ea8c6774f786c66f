//! The simulator's own control endpoints under [`crate::SIM_PREFIX`] (`/__sim`), outside
//! every Kubernetes path. See the crate docs for the list.

use std::sync::Arc;

use http::{Method, Response};
use serde_json::{Value, json};

use super::respond::{self, Body};
use crate::faults::fail_rules::FailRule;
use crate::faults::server_faults::ServerFaults;
use crate::machinery::resource_info::GroupResource;
use crate::machinery::status::ApiError;
use crate::shared::{Shared, WatchListMode};

/// Handles `/__sim/<segs...>`.
pub(crate) fn handle(
    shared: &Arc<Shared>,
    method: &Method,
    segs: &[String],
    body: &[u8],
) -> Response<Body> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match (method.as_str(), s.as_slice()) {
        ("POST", ["watches", "drop"]) => {
            shared.drop_watches();
            respond::json(200, &json!({"dropped": true}))
        }
        ("POST", ["compact"]) => {
            let rv = shared.compact();
            respond::json(200, &json!({"compactedTo": rv.to_string()}))
        }
        ("POST", ["bookmarks"]) => {
            shared.send_bookmarks();
            respond::json(200, &json!({"sent": true}))
        }
        ("POST", [state @ ("ready" | "unready")]) => {
            let ready = *state == "ready";
            shared
                .ready
                .store(ready, std::sync::atomic::Ordering::SeqCst);
            respond::json(200, &json!({"ready": ready}))
        }
        ("POST", ["watchlist", state @ ("on" | "off" | "ignore")]) => {
            let mode = match *state {
                "on" => WatchListMode::Supported,
                "off" => WatchListMode::Rejected,
                _ => WatchListMode::Ignored,
            };
            shared.set_watch_list_mode(mode);
            respond::json(
                200,
                &json!({"watchList": mode == WatchListMode::Supported, "mode": format!("{mode:?}")}),
            )
        }
        ("GET", ["requests"]) => respond::json(
            200,
            &serde_json::to_value(shared.requests.snapshot()).unwrap_or(Value::Null),
        ),
        ("DELETE", ["requests"]) => {
            shared.requests.reset();
            respond::json(200, &json!({"reset": true}))
        }
        ("GET", ["resourceversion"]) => {
            let rv = shared.state.lock().rv;
            respond::json(200, &json!({"resourceVersion": rv.to_string()}))
        }
        ("GET", ["faults"]) => {
            let rules = shared.faults.lock().rules();
            respond::json(200, &serde_json::to_value(rules).unwrap_or(Value::Null))
        }
        ("POST", ["faults"]) => match serde_json::from_slice::<FailRule>(body) {
            Ok(rule) => match shared.faults.lock().add(rule.clone()) {
                Ok(()) => respond::json(201, &serde_json::to_value(rule).unwrap_or(Value::Null)),
                Err(e) => {
                    respond::error(&ApiError::bad_request(format!("invalid fault rule: {e}")))
                }
            },
            Err(e) => respond::error(&ApiError::bad_request(format!("invalid fault rule: {e}"))),
        },
        ("DELETE", ["faults"]) => {
            shared.faults.lock().clear();
            respond::json(200, &json!({"cleared": true}))
        }
        ("GET", ["chaos"]) => match &shared.chaos {
            Some(c) => respond::json(
                200,
                &json!({
                    "seed": c.config().seed,
                    "profile": c.config().profile.to_string(),
                    "active": c.active(),
                    "injected": serde_json::to_value(c.stats()).unwrap_or(Value::Null),
                }),
            ),
            None => respond::error(&ApiError::new(404, "NotFound", "chaos mode is off")),
        },
        ("DELETE", ["chaos"]) => {
            if let Some(c) = &shared.chaos {
                c.stop();
            }
            respond::json(200, &json!({"active": false}))
        }
        ("GET", ["objects", group, resource]) => objects(shared, group, resource),
        ("GET", ["objects", resource]) => objects(shared, "core", resource),
        _ => respond::error(&ApiError::unknown_path()),
    }
}

fn objects(shared: &Shared, group: &str, resource: &str) -> Response<Body> {
    let group = if group == "core" { "" } else { group };
    let st = shared.state.lock();
    match st.resource(&GroupResource::new(group, resource)) {
        Some(rs) => {
            let items: Vec<&Value> = rs.objects.values().map(|v| v.obj.as_ref()).collect();
            respond::json(
                200,
                &json!({"resourceVersion": st.rv.to_string(), "items": items}),
            )
        }
        None => respond::error(&ApiError::unknown_path()),
    }
}
