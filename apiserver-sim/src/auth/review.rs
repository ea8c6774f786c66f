//! SelfSubjectAccessReview (`POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`,
//! what `kubectl auth can-i` sends): whether the requesting user may do what the review's
//! `spec` describes, decided by the same authorizer as real requests.

use parking_lot::Mutex;
use serde_json::{Value, json};

use super::attributes::{Attributes, ResourceAttributes};
use super::identity::Identity;
use super::rbac::authorize;
use super::state::Auth;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Whether a resource request is a SelfSubjectAccessReview create.
pub(crate) fn is_review(group: &str, plural: &str, name: Option<&str>) -> bool {
    group == "authorization.k8s.io" && plural == "selfsubjectaccessreviews" && name.is_none()
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn optional(v: &Value, key: &str) -> Option<String> {
    Some(text(v, key)).filter(|s| !s.is_empty())
}

/// The attributes a review's `spec` asks about.
fn attributes(spec: &Value) -> ApiResult<Attributes> {
    if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        return Ok(Attributes {
            verb: text(r, "verb"),
            path: String::new(),
            resource: Some(ResourceAttributes {
                group: text(r, "group"),
                version: text(r, "version"),
                resource: text(r, "resource"),
                subresource: optional(r, "subresource"),
                namespace: optional(r, "namespace"),
                name: optional(r, "name"),
            }),
        });
    }
    if let Some(n) = spec.get("nonResourceAttributes").filter(|v| v.is_object()) {
        return Ok(Attributes {
            verb: text(n, "verb"),
            path: text(n, "path"),
            resource: None,
        });
    }
    Err(ApiError::new(
        422,
        "Invalid",
        "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
    ))
}

/// Answers a review `body` for `who`: the review with its `status`, to send with 201.
pub(crate) fn serve(
    auth: &Auth,
    state: &Mutex<State>,
    who: &Identity,
    body: &[u8],
) -> ApiResult<Value> {
    let mut review: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("decoding SelfSubjectAccessReview: {e}")))?;
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let attrs = attributes(&spec)?;
    let (allowed, reason) = if auth.enabled {
        let decision = authorize(&state.lock(), who, &attrs);
        (decision.allowed, decision.reason)
    } else {
        (true, String::new())
    };
    let mut status = json!({"allowed": allowed});
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    if let Some(obj) = review.as_object_mut() {
        obj.insert("status".into(), status);
        obj.insert("apiVersion".into(), json!("authorization.k8s.io/v1"));
        obj.insert("kind".into(), json!("SelfSubjectAccessReview"));
        obj.entry("metadata").or_insert_with(|| json!({}));
    }
    Ok(review)
}
