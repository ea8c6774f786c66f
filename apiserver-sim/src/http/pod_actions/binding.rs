//! `POST pods/<name>/binding`: assigns a pending pod to a node as the scheduler does
//! (`spec.nodeName`, the `PodScheduled` condition, the binding's annotations), with
//! upstream's answers: a name other than the URL's (400), a missing or unsupported target
//! (its validation error as a plain 500), a pod already assigned or being deleted (409).

use http::{Method, Response};
use serde_json::{Map, Value, json};

use super::{Target, created, posted};
use crate::http::respond::Body;
use crate::machinery::meta;
use crate::machinery::pointer::text;
use crate::machinery::query::Query;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Binds the pod `at` to the node the body names.
pub(super) fn bind(
    st: &mut State,
    at: &Target<'_>,
    method: &Method,
    query: &Query,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let (binding, dry_run) = posted(at, method, query, body, "Binding", &["v1"])?;
    let target = |k: &str| text(&binding, &format!("/target/{k}"));
    let mut problems = Vec::new();
    if !target("kind").is_empty() && target("kind") != "Node" {
        problems.push(format!(
            "target.kind: Unsupported value: {:?}: supported values: \"Node\", \"<empty>\"",
            target("kind")
        ));
    }
    if target("name").is_empty() {
        problems.push("target.name: Required value".to_string());
    }
    match problems.as_slice() {
        [] => {}
        [one] => return Err(ApiError::new(500, "", one.clone())),
        many => return Err(ApiError::new(500, "", format!("[{}]", many.join(", ")))),
    }
    let pod = at.pod(st)?;
    let conflict = |why: String| {
        let mut e = ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on pods/binding \"{}\": {why}",
                at.name
            ),
        );
        e.details.name = Some(at.name.to_string());
        e.details.kind = Some("pods/binding".to_string());
        e
    };
    if meta::is_deleting(&pod) {
        return Err(conflict(format!(
            "pod {} is being deleted, cannot be assigned to a host",
            at.name
        )));
    }
    let assigned = text(&pod, "/spec/nodeName");
    if !assigned.is_empty() {
        return Err(conflict(format!(
            "pod {} is already assigned to node {assigned:?}",
            at.name
        )));
    }
    let mut new = (*pod).clone();
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), json!(target("name")));
    }
    if let Some(extra) = meta::field(&binding, "annotations").and_then(Value::as_object) {
        let md = meta::metadata_mut(&mut new);
        let annotations = md
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(a) = annotations.as_object_mut() {
            a.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    set_scheduled(&mut new);
    if !dry_run {
        st.put_at(
            &at.pods.key(),
            (at.ns.to_string(), at.name.to_string()),
            new,
        );
    }
    Ok(created())
}

/// Sets the pod's `PodScheduled` condition to `True` (a new condition starts now).
fn set_scheduled(pod: &mut Value) {
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    let status = obj.entry("status").or_insert_with(|| json!({}));
    let Some(status) = status.as_object_mut() else {
        return;
    };
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let now = meta::now_rfc3339();
    match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) if c["status"] == "True" => {}
        Some(c) => {
            c["status"] = json!("True");
            c["lastTransitionTime"] = json!(now);
        }
        None => list.push(json!({"type": "PodScheduled", "status": "True",
            "lastProbeTime": null, "lastTransitionTime": now})),
    }
}
