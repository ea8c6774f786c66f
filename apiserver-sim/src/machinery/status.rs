//! Kubernetes `Status` error bodies.
//!
//! Every failed request is answered with a one-line `Status` document whose `reason`
//! carries the meaning (kube-rs and client-go compare the reason string, not the code).

use serde_json::{Value, json};

use crate::machinery::resource_info::{ResourceInfo, group_qualified};

/// One cause inside `details.causes` of a `Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Machine-readable reason, e.g. `FieldValueRequired`.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// The field path the cause refers to, e.g. `metadata.name`.
    pub field: String,
}

impl Cause {
    /// A cause whose reason follows its message's error type, as upstream's `field.Error`
    /// prints it (`Forbidden: …` is `FieldValueForbidden`, `Unsupported value: …` is
    /// `FieldValueNotSupported`, …; anything else `FieldValueInvalid`).
    pub fn typed(field: &str, message: &str) -> Self {
        const TYPES: &[(&str, &str)] = &[
            ("Forbidden", "FieldValueForbidden"),
            ("Unsupported value", "FieldValueNotSupported"),
            ("Required value", "FieldValueRequired"),
            ("Duplicate value", "FieldValueDuplicate"),
            ("Not found", "FieldValueNotFound"),
            ("Too long", "FieldValueTooLong"),
            ("Too many", "FieldValueTooMany"),
            ("Internal error", "InternalError"),
        ];
        let reason = TYPES
            .iter()
            .find(|(prefix, _)| message.starts_with(prefix))
            .map_or("FieldValueInvalid", |(_, reason)| reason);
        Self {
            reason: reason.into(),
            message: message.to_string(),
            field: field.to_string(),
        }
    }
}

/// Causes as upstream's error aggregate prints them: `field: message`, repeated messages
/// once, several in brackets.
fn aggregate(causes: &[Cause]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for c in causes {
        let line = format!("{}: {}", c.field, c.message);
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The optional `details` of a `Status`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    /// `details.name`.
    pub name: Option<String>,
    /// `details.group`.
    pub group: Option<String>,
    /// `details.kind` (upstream puts the plural resource name here).
    pub kind: Option<String>,
    /// `details.causes`.
    pub causes: Vec<Cause>,
    /// `details.retryAfterSeconds`; also sent as a `Retry-After` header.
    pub retry_after: Option<u64>,
    /// `metadata.continue` of the Status (a fresh token offered with an expired one).
    pub list_continue: Option<String>,
    /// Whether `details` is sent even when empty (`"details":{}`), as upstream's generic
    /// server errors (`NewGenericServerResponse`) send it.
    pub keep_empty: bool,
}

/// An API error, rendered on the wire as a Kubernetes `Status` with `status: Failure`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code (also the `code` field).
    pub code: u16,
    /// The `reason` field; empty for the few upstream errors that carry none.
    pub reason: &'static str,
    /// The `message` field.
    pub message: String,
    /// The `details` field.
    pub details: Box<Details>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// Result type of request handling.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A bare error with a code, reason and message.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Box::default(),
        }
    }

    fn about(self, info: &ResourceInfo, name: &str) -> Self {
        self.on(&info.group, &info.plural, name)
    }

    /// The details naming the object: `group` and `name` unless empty (upstream leaves them
    /// out), `kind` (a resource, or for Invalid a kind).
    fn on(mut self, group: &str, kind: &str, name: &str) -> Self {
        self.details.name = (!name.is_empty()).then(|| name.to_string());
        self.details.group = (!group.is_empty()).then(|| group.to_string());
        self.details.kind = Some(kind.to_string());
        self
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// An error with an empty details object, as go-restful's generic errors have.
    fn bare(code: u16, reason: &'static str, message: &str) -> Self {
        let mut e = Self::new(code, reason, message);
        e.details.keep_empty = true;
        e
    }

    /// 404 for a path or resource the server does not serve.
    pub fn unknown_path() -> Self {
        Self::bare(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 404 for a missing object.
    pub fn not_found(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", info.qualified()),
        )
        .about(info, name)
    }

    /// 404 for a write into a namespace that does not exist.
    pub fn namespace_not_found(ns: &str) -> Self {
        let mut e = Self::new(404, "NotFound", format!("namespaces \"{ns}\" not found"));
        e.details.name = Some(ns.to_string());
        e.details.kind = Some("namespaces".into());
        e
    }

    /// 409 AlreadyExists.
    pub fn already_exists(info: &ResourceInfo, name: &str, being_deleted: bool) -> Self {
        let prefix = if being_deleted {
            "object is being deleted: "
        } else {
            ""
        };
        Self::new(
            409,
            "AlreadyExists",
            format!("{prefix}{} \"{name}\" already exists", info.qualified()),
        )
        .about(info, name)
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn conflict(info: &ResourceInfo, name: &str) -> Self {
        Self::conflict_msg(
            info,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with a custom explanation (precondition failures).
    pub fn conflict_msg(info: &ResourceInfo, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                info.qualified()
            ),
        )
        .about(info, name)
    }

    /// 409 Conflict of a failed delete precondition, as the storage layer words it: the
    /// object named by its kind (`Operation cannot be fulfilled on ConfigMap "a": ...`).
    pub fn precondition_failed(info: &ResourceInfo, name: &str, why: &str) -> Self {
        let mut e = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                info.kind_qualified()
            ),
        )
        .about(info, name);
        e.details.kind = Some(info.kind.clone());
        e
    }

    /// 422 Invalid on an object, with causes.
    pub fn invalid(info: &ResourceInfo, name: &str, causes: Vec<Cause>) -> Self {
        Self::invalid_kind(&info.group, &info.kind, name, causes)
    }

    /// 422 Invalid on an object of a group ("" for core) and kind, with causes.
    pub fn invalid_kind(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qualified = group_qualified(kind, group);
        let detail = aggregate(&causes);
        let message = format!("{qualified} \"{name}\" is invalid: {detail}");
        let mut e = Self::new(422, "Invalid", message).on(group, kind, name);
        e.details.causes = causes;
        e
    }

    /// 422 Invalid for list/watch/write options (details kind `ListOptions`, `CreateOptions`…):
    /// one cause, its reason read from the message's error type.
    pub fn invalid_options(kind: &str, field: &str, message: &str) -> Self {
        Self::invalid_options_causes(kind, vec![Cause::typed(field, message)])
    }

    /// 422 Invalid for options with several causes, aggregated as upstream words them.
    pub fn invalid_options_causes(kind: &str, causes: Vec<Cause>) -> Self {
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{kind}.meta.k8s.io \"\" is invalid: {}", aggregate(&causes)),
        );
        e.details.kind = Some(kind.to_string());
        e.details.group = Some("meta.k8s.io".into());
        e.details.causes = causes;
        e
    }

    /// 410 Expired.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        let message = "the server does not allow this method on the requested resource";
        Self::bare(405, "MethodNotAllowed", message)
    }

    /// 422 with upstream's generic message and no detail (`NewGenericServerResponse`), as a
    /// JSON patch that does not apply is answered.
    pub fn generic_invalid() -> Self {
        let message = "the server rejected our request due to an error in our request";
        Self::bare(422, "Invalid", message)
    }

    /// 415 UnsupportedMediaType of a body in a format the endpoint does not decode, listing
    /// the media types it does (comma-separated).
    pub fn unsupported_media_type(accepted: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
        )
    }

    /// 415 UnsupportedMediaType of a PATCH whose patch type is unknown: go-restful's generic
    /// answer, with an empty details object.
    pub fn unsupported_patch_type() -> Self {
        Self::bare(415, "UnsupportedMediaType", "415: Unsupported Media Type")
    }

    /// 403 Forbidden.
    pub fn forbidden(info: &ResourceInfo, name: &str, why: &str) -> Self {
        Self::forbidden_on(&info.group, &info.plural, name, why)
    }

    /// 403 Forbidden on a resource of a group, naming the object unless `name` is empty.
    pub fn forbidden_on(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let qualified = group_qualified(resource, group);
        let message = match name {
            "" => format!("{qualified} is forbidden: {why}"),
            name => format!("{qualified} {name:?} is forbidden: {why}"),
        };
        Self::new(403, "Forbidden", message).on(group, resource, name)
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("request entity too large: limit is {limit} bytes"),
        )
    }

    /// 500 InternalError.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// A `Status` produced by fault injection for the given code.
    pub fn injected(code: u16, retry_after: Option<u64>) -> Self {
        let (reason, message) = match code {
            400 => ("BadRequest", "injected bad request"),
            401 => ("Unauthorized", "Unauthorized"),
            403 => ("Forbidden", "forbidden: injected fault"),
            404 => (
                "NotFound",
                "the server could not find the requested resource",
            ),
            409 => ("Conflict", "injected conflict"),
            410 => (
                "Expired",
                "The resourceVersion for the provided list is too old.",
            ),
            429 => (
                "TooManyRequests",
                "Too many requests, please try again later.",
            ),
            500 => ("InternalError", "Internal error occurred: injected fault"),
            503 => (
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            504 => ("Timeout", "the server was unable to respond in time"),
            _ => ("", "injected fault"),
        };
        let mut e = Self::new(code, reason, message);
        e.details.retry_after = retry_after;
        e
    }

    /// The `Status` document as JSON.
    pub fn to_status(&self) -> Value {
        let mut details = serde_json::Map::new();
        if let Some(n) = &self.details.name {
            details.insert("name".into(), json!(n));
        }
        if let Some(g) = &self.details.group {
            details.insert("group".into(), json!(g));
        }
        if let Some(k) = &self.details.kind {
            details.insert("kind".into(), json!(k));
        }
        if !self.details.causes.is_empty() {
            let causes: Vec<Value> = self
                .details
                .causes
                .iter()
                .map(|c| {
                    let mut cause = json!({"reason": c.reason, "message": c.message});
                    // Upstream's `field` is `omitempty` (a budget's cause has none).
                    if !c.field.is_empty() {
                        cause["field"] = json!(c.field);
                    }
                    cause
                })
                .collect();
            details.insert("causes".into(), Value::Array(causes));
        }
        if let Some(r) = self.details.retry_after {
            details.insert("retryAfterSeconds".into(), json!(r));
        }
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(m) = status.as_object_mut() {
            // Upstream omits an empty reason (a 500 from a plain error has none).
            if self.reason.is_empty() {
                m.remove("reason");
            }
            if !details.is_empty() || self.details.keep_empty {
                m.insert("details".into(), Value::Object(details));
            }
        }
        if let Some(c) = &self.details.list_continue {
            status["metadata"] = json!({"continue": c});
        }
        status
    }
}

/// Shorthand for a required-field cause.
pub fn required(field: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: if message.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {message}")
        },
        field: field.into(),
    }
}

/// Shorthand for an invalid-value cause.
pub fn invalid_value(field: &str, value: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value:?}: {message}"),
        field: field.into(),
    }
}

/// A `FieldValueInvalid` cause whose value is not a string, printed as Go prints such values
/// in field errors (compact JSON).
pub fn invalid_json_value(field: &str, value: &Value, message: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {message}"),
        field: field.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_body_has_reason_code_and_details() {
        let e = ApiError::bad_request("nope");
        let s = e.to_status();
        assert_eq!(s["reason"], "BadRequest");
        assert_eq!(s["code"], 400);
        assert_eq!(s["status"], "Failure");
        assert!(s.get("details").is_none());
        let e = ApiError::injected(429, Some(3)).to_status();
        assert_eq!(e["details"]["retryAfterSeconds"], 3);
    }
}
