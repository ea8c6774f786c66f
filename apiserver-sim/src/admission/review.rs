//! The `AdmissionReview` wire format (admission.k8s.io/v1, and v1beta1 for webhooks that
//! only accept it): the request a webhook receives, the checks its response must pass, and
//! how a denial or a failed call reaches the client (apiserver `webhook/request` and
//! `webhook/errors`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::hooks::Webhook;
use super::matching::{Attributes, Invocation};
use crate::machinery::pointer::{owned_strings, text};
use crate::machinery::status::ApiError;

/// The user every request is attributed to: the simulator authenticates nobody, and serves
/// everyone as a cluster administrator.
pub fn user_info() -> Value {
    json!({"username": "system:admin", "groups": ["system:masters", "system:authenticated"]})
}

/// A request that failed in admission: the status code and the `Status` body to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// HTTP status code.
    pub code: u16,
    /// The `Status` document.
    pub status: Value,
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure {
            code: e.code,
            status: e.to_status(),
        }
    }
}

impl Failure {
    /// `500 InternalError` with the message as its one cause, as `apierrors.NewInternalError`.
    pub fn internal(message: &str) -> Self {
        Failure {
            code: 500,
            status: json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": format!("Internal error occurred: {message}"),
                "reason": "InternalError",
                "details": {"causes": [{"message": message}]},
                "code": 500,
            }),
        }
    }

    /// A webhook that could not be called (or answered nonsense): `failed calling webhook`.
    pub fn calling(hook: &str, cause: &str) -> Self {
        Self::internal(&format!("failed calling webhook \"{hook}\": {cause}"))
    }
}

/// The review version sent to a webhook: the first of its `admissionReviewVersions` known.
fn review_version(hook: &Webhook) -> Option<&'static str> {
    hook.review_versions.iter().find_map(|v| match v.as_str() {
        "v1" => Some("v1"),
        "v1beta1" => Some("v1beta1"),
        _ => None,
    })
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

fn gvr(group: &str, version: &str, resource: &str) -> Value {
    json!({"group": group, "version": version, "resource": resource})
}

/// The `AdmissionReview` for one call; `object` and `old` are in the invocation's version.
/// The error reads as the reason of a `failed calling webhook`.
pub fn request(
    hook: &Webhook,
    attrs: &Attributes,
    invocation: &Invocation,
    uid: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Value, String> {
    let Some(version) = review_version(hook) else {
        return Err(
            "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)"
                .into(),
        );
    };
    let info = &attrs.info;
    let mut req = json!({
        "uid": uid,
        "kind": gvk(&info.group, &invocation.version, &info.kind),
        "resource": gvr(&info.group, &invocation.version, &info.plural),
        "requestKind": gvk(&info.group, &attrs.version, &info.kind),
        "requestResource": gvr(&info.group, &attrs.version, &info.plural),
        "operation": attrs.operation.as_str(),
        "userInfo": user_info(),
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": attrs.dry_run,
        "options": attrs.options,
    });
    for (key, value) in [
        ("subResource", &attrs.subresource),
        ("requestSubResource", &attrs.subresource),
        ("name", &attrs.name),
        ("namespace", &attrs.namespace),
    ] {
        if !value.is_empty() {
            req[key] = json!(value);
        }
    }
    Ok(json!({
        "apiVersion": format!("admission.k8s.io/{version}"),
        "kind": "AdmissionReview",
        "request": req,
    }))
}

/// What a webhook answered, once checked.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// `response.allowed`.
    pub allowed: bool,
    /// `response.status`, if any.
    pub status: Option<Value>,
    /// The decoded JSON patch (mutating webhooks), if any.
    pub patch: Option<Value>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
}

/// Checks a webhook's answer (`VerifyAdmissionResponse`); the error reads as the reason of a
/// `received invalid webhook response`.
pub fn verify(hook: &Webhook, uid: &str, mutating: bool, review: &Value) -> Result<Answer, String> {
    let v1 = review_version(hook) == Some("v1");
    let Some(resp) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    if v1 {
        let got_uid = text(resp, "/uid");
        if got_uid != uid {
            return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
        }
        let (av, kind) = (text(review, "/apiVersion"), text(review, "/kind"));
        if av != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let (group, version) = av.split_once('/').unwrap_or(("", av));
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group}/{version}, Kind={kind}"
            ));
        }
    }
    let patch = resp.get("patch").and_then(Value::as_str).unwrap_or("");
    let patch_type = resp.get("patchType").filter(|v| !v.is_null());
    let mut decoded = None;
    if mutating {
        if v1 && !patch.is_empty() && patch_type.is_none() {
            return Err("webhook returned response.patch but not response.patchType".into());
        }
        if v1 && patch.is_empty() && patch_type.is_some() {
            return Err("webhook returned response.patchType but not response.patch".into());
        }
        if let Some(t) = patch_type
            && t.as_str() != Some("JSONPatch")
        {
            return Err(format!(
                "webhook returned invalid response.patchType of {:?}",
                t.as_str().unwrap_or("")
            ));
        }
        if !patch.is_empty() {
            let bytes = STANDARD
                .decode(patch)
                .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
            let doc: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
            decoded = Some(doc);
        }
    } else if v1 && !patch.is_empty() {
        return Err("validating webhook may not return response.patch".into());
    } else if v1 && patch_type.is_some() {
        return Err("validating webhook may not return response.patchType".into());
    }
    let warnings = owned_strings(resp, "/warnings");
    Ok(Answer {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: resp.get("status").filter(|s| s.is_object()).cloned(),
        patch: decoded,
        warnings,
    })
}

/// A webhook's denial as the client sees it: the webhook's `Status` with the code raised to
/// at least 400, `status: Failure`, and the message `admission webhook "<name>" denied the
/// request: <message or reason>` (or `... without explanation`).
pub fn denial(hook: &str, status: Option<&Value>) -> Failure {
    let mut s = status.cloned().unwrap_or_else(|| json!({}));
    let code = s
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..=599).contains(c))
        .unwrap_or(400);
    let (message, reason) = (
        text(&s, "/message").to_owned(),
        text(&s, "/reason").to_owned(),
    );
    let denied = format!("admission webhook \"{hook}\" denied the request");
    let message = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    if let Some(m) = s.as_object_mut() {
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.entry("metadata").or_insert_with(|| json!({}));
        m.insert("status".into(), json!("Failure"));
        m.insert("message".into(), json!(message));
        m.insert("code".into(), json!(code));
        if reason.is_empty() {
            m.remove("reason");
        }
    }
    Failure { code, status: s }
}

/// A `Warning` header value: `299 - "<text>"`, the text made printable and quotes escaped.
pub fn warning_header(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
