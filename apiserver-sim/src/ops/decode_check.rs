//! What upstream's decoder finds wrong with a body before any validation: an object of
//! another type than the endpoint's, a field of the wrong type, a required field missing,
//! `[]byte` values that are not base64; worded as the real server words them.

use serde_json::Value;

use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult, required};

/// A built-in endpoint given an object of another type, as upstream's decoder refuses it: a
/// type its scheme does not know, or one it knows but cannot convert to the endpoint's.
pub(super) fn builtin_type_mismatch(
    info: &ResourceInfo,
    sent_av: &str,
    sent_kind: &str,
) -> ApiError {
    let (group, version) = sent_av.split_once('/').unwrap_or(("", sent_av));
    let known = crate::kinds::builtins::builtins()
        .iter()
        .any(|r| r.group == group && r.kind == sent_kind && r.serves(version));
    let why = if known {
        // The internal types live in a package named after the group's first label.
        let internal = match info.group.split('.').next() {
            None | Some("") => "core",
            Some(first) => first,
        };
        format!(
            "converting ({version}.{sent_kind}) to ({internal}.{}): unknown conversion",
            info.kind
        )
    } else {
        format!(
            "no kind \"{sent_kind}\" is registered for version \"{sent_av}\" in scheme \"kubernetes/pkg/api/legacyscheme/scheme.go:30\""
        )
    };
    ApiError::bad_request(format!(
        "{sent_kind} in version \"{version}\" cannot be handled as a {}: {why}",
        info.kind
    ))
}

/// A built-in object must decode as its k8s-openapi type (the real server decodes every
/// body into its Go type): a required field missing is 422 `Invalid` with a `Required`
/// cause at the field's path, any other decoding failure (a wrong type, an unknown enum
/// value) is 400 `BadRequest` naming the field as serde reports it.
pub fn typed(info: &ResourceInfo, version: &str, obj: &Value) -> ApiResult<()> {
    let Some(check) = info.check(version) else {
        return Ok(());
    };
    if let Some(why) = base64_field_error(info, obj) {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{version}\" cannot be handled as a {}: {why}",
            info.kind, info.kind
        )));
    }
    let Err(e) = check(obj) else {
        return Ok(());
    };
    if let Some(path) = e.missing_path() {
        return Err(ApiError::invalid(
            info,
            meta::name(obj),
            vec![required(&path, "")],
        ));
    }
    let at = if e.path.is_empty() {
        String::new()
    } else {
        format!("{}: ", e.path)
    };
    Err(ApiError::bad_request(format!(
        "{} in version \"{version}\" cannot be handled as a {}: {at}{}",
        info.kind, info.kind, e.message
    )))
}

/// Go's error for the first value of a `[]byte` map (a Secret's `data`, a ConfigMap's
/// `binaryData`) that is not standard base64, as upstream's decoder reports it: without the
/// field's path.
fn base64_field_error(info: &ResourceInfo, obj: &Value) -> Option<String> {
    let field = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Secret") => "data",
        ("", "ConfigMap") => "binaryData",
        _ => return None,
    };
    obj.get(field)?
        .as_object()?
        .values()
        .filter_map(Value::as_str)
        .find_map(crate::machinery::go_base64::std_decode_error)
}
