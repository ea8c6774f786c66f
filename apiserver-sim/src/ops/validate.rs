//! Checks every write goes through: type meta, name/namespace agreement, object validation
//! (what decoding into the body's type finds wrong is in `decode_check.rs`).

use serde_json::Value;

use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{
    ApiError, ApiResult, Cause, invalid_json_value, invalid_value, required,
};

pub use super::decode_check::typed;
use crate::machinery::name_rules::{
    DNS_LABEL_MESSAGE, DNS_SUBDOMAIN_MESSAGE, check_string_map, config_keys, path_segment_problem,
};

/// The body must be a JSON object whose `apiVersion`/`kind`, when present, match the endpoint.
/// Fills missing ones with the storage version's values.
pub fn type_meta(info: &ResourceInfo, version: &str, obj: &mut Value) -> ApiResult<()> {
    let Value::Object(map) = obj else {
        return Err(ApiError::bad_request(format!(
            "the body of the request must be a JSON object describing a {}",
            info.kind
        )));
    };
    let sent_av = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let sent_kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    let av_fits = sent_av.is_empty()
        || is_api_version(info, sent_av, version)
        || same_group_served(info, sent_av);
    let kind_fits = sent_kind.is_empty() || sent_kind == info.kind;
    if !(av_fits && kind_fits) {
        if info.builtin {
            let av = if sent_av.is_empty() {
                info.api_version(version)
            } else {
                sent_av.to_string()
            };
            let kind = if sent_kind.is_empty() {
                info.kind.as_str()
            } else {
                sent_kind
            };
            return Err(super::decode_check::builtin_type_mismatch(info, &av, kind));
        }
        if !av_fits {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({sent_av}) does not match the expected API version ({})",
                info.api_version(version)
            )));
        }
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({sent_kind}) does not match the expected kind ({})",
            info.kind
        )));
    }
    let storage = info.storage_version();
    if !map
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|av| is_api_version(info, av, storage))
    {
        map.insert(
            "apiVersion".into(),
            Value::String(info.api_version(storage)),
        );
    }
    if map.get("kind").and_then(Value::as_str) != Some(info.kind.as_str()) {
        map.insert("kind".into(), Value::String(info.kind.clone()));
    }
    if let Some(md) = map.get("metadata")
        && !md.is_object()
        && !md.is_null()
    {
        return Err(ApiError::bad_request("metadata must be an object"));
    }
    Ok(())
}

/// Leaves out the metadata fields Go's `omitempty` leaves out when they are empty (labels,
/// annotations, finalizers, owner references): the real server decodes every object's
/// metadata into `ObjectMeta` and encodes it again, so a merge patch removing the last label
/// leaves no `labels` behind.
pub fn omit_empty_metadata(obj: &mut Value) {
    let Some(md) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["labels", "annotations", "finalizers", "ownerReferences"] {
        let empty = match md.get(field) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if empty {
            md.remove(field);
        }
    }
}

/// Whether `av` is `info`'s group at `version` (what [`ResourceInfo::api_version`] builds,
/// compared without building it: this runs on every write).
fn is_api_version(info: &ResourceInfo, av: &str, version: &str) -> bool {
    if info.group.is_empty() {
        av == version
    } else {
        av.split_once('/') == Some((info.group.as_str(), version))
    }
}

fn same_group_served(info: &ResourceInfo, av: &str) -> bool {
    let (group, version) = av.split_once('/').unwrap_or(("", av));
    group == info.group && info.serves(version)
}

/// The warning upstream sends for a field a custom resource's schema does not know.
pub fn unknown_field_warning(field: &str) -> String {
    format!("unknown field \"{field}\"")
}

/// The warnings a write of `obj` gets for fields its schema does not know (`Warn`, the
/// default, only), without changing it.
pub fn unknown_field_warnings(
    info: &ResourceInfo,
    version: &str,
    obj: &Value,
    mode: super::FieldValidation,
) -> Vec<String> {
    if info.builtin || mode != super::FieldValidation::Warn {
        return Vec::new();
    }
    crate::kinds::schema::prune(info, version, &mut obj.clone())
        .iter()
        .map(|f| unknown_field_warning(f))
        .collect()
}

/// Prunes fields a custom resource's schema does not know; with `Strict`, rejects them. The
/// paths pruned are returned for `Warn` (upstream's default), which warns of each.
pub fn prune(
    info: &ResourceInfo,
    version: &str,
    obj: &mut Value,
    mode: super::FieldValidation,
) -> ApiResult<Vec<String>> {
    if info.builtin {
        return Ok(Vec::new());
    }
    let unknown = crate::kinds::schema::prune(info, version, obj);
    if mode == super::FieldValidation::Strict && !unknown.is_empty() {
        let fields: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        return Err(ApiError::bad_request(format!(
            "{} in version \"{version}\" cannot be handled as a {}: strict decoding error: {}",
            info.kind,
            info.kind,
            fields.join(", ")
        )));
    }
    Ok(if mode == super::FieldValidation::Warn {
        unknown
    } else {
        Vec::new()
    })
}

/// Checks (or fills) the body namespace against the URL's, and the body name against the URL's.
pub fn name_and_namespace(
    info: &ResourceInfo,
    url_ns: Option<&str>,
    url_name: Option<&str>,
    obj: &mut Value,
) -> ApiResult<()> {
    if let Some(url_name) = url_name {
        let body_name = meta::name(obj);
        if body_name.is_empty() {
            meta::set_str(obj, "name", url_name);
        } else if body_name != url_name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({url_name})"
            )));
        }
    }
    if info.namespaced {
        let url_ns = url_ns.unwrap_or("");
        let body_ns = meta::namespace(obj);
        if body_ns.is_empty() {
            meta::set_str(obj, "namespace", url_ns);
        } else if body_ns != url_ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else {
        meta::metadata_mut(obj).remove("namespace");
    }
    Ok(())
}

/// Validation shared by every type: name, labels, annotations, owner references.
pub fn object(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    // `metadata` once, its fields by name (this runs on every write).
    let md = obj.get("metadata");
    let md_field = |f: &str| md.and_then(|m| m.get(f));
    let name = md_field("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        causes.push(required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else if info.group == "rbac.authorization.k8s.io" {
        // RBAC names are path segments (`system:discovery` is valid), as upstream.
        if let Some(why) = path_segment_problem(name) {
            causes.push(invalid_value("metadata.name", name, why));
        }
    } else {
        let ok = if info.group.is_empty() && info.plural == "namespaces" {
            meta::is_dns_label(name)
        } else {
            meta::is_dns_subdomain(name)
        };
        if !ok {
            let why = if info.group.is_empty() && info.plural == "namespaces" {
                DNS_LABEL_MESSAGE
            } else {
                DNS_SUBDOMAIN_MESSAGE
            };
            causes.push(invalid_value("metadata.name", name, why));
        }
    }
    check_string_map(md, "labels", &mut causes, true);
    check_string_map(md, "annotations", &mut causes, false);
    let owners = md_field("ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let controllers = owners
        .iter()
        .filter(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        .count();
    if controllers > 1 {
        causes.push(invalid_value(
            "metadata.ownerReferences",
            "",
            "Only one reference can have Controller set to true",
        ));
    }
    for (i, o) in owners.iter().enumerate() {
        for f in ["apiVersion", "kind", "name", "uid"] {
            if o.get(f).and_then(Value::as_str).is_none_or(str::is_empty) {
                causes.push(required(&format!("metadata.ownerReferences[{i}].{f}"), ""));
            }
        }
    }
    if let Some(f) = md_field("finalizers")
        && !f.is_null()
        && !f.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        causes.push(invalid_value(
            "metadata.finalizers",
            &f.to_string(),
            "must be a list of strings",
        ));
    }
    if info.group == "apiextensions.k8s.io" {
        causes.extend(crate::kinds::crd::validate(obj));
    } else if crate::kinds::webhook_configuration::is_webhook_configuration(info) {
        causes.extend(crate::kinds::webhook_configuration::validate(obj));
    } else if info.builtin {
        causes.extend(builtin_fields(info, obj));
        causes.extend(super::template_rules::template_metadata(info, obj));
    } else {
        causes.extend(crate::kinds::schema::validate(info, obj));
    }
    causes
}

fn containers(obj: &Value, ptr: &str, field: &str, causes: &mut Vec<Cause>) {
    let list = obj.pointer(ptr).and_then(Value::as_array);
    match list {
        None => causes.push(required(field, "")),
        Some(cs) if cs.is_empty() => causes.push(required(field, "")),
        Some(cs) => {
            for (i, c) in cs.iter().enumerate() {
                for f in ["name", "image"] {
                    if c.get(f).and_then(Value::as_str).is_none_or(str::is_empty) {
                        causes.push(required(&format!("{field}[{i}].{f}"), ""));
                    }
                }
            }
        }
    }
}

/// Required fields of the built-in types with a spec (a practical subset of upstream
/// validation: what a controller most easily gets wrong).
fn builtin_fields(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "pods") => containers(obj, "/spec/containers", "spec.containers", &mut causes),
        ("", "configmaps") => {
            config_keys(obj, "data", &mut causes);
            config_keys(obj, "binaryData", &mut causes);
        }
        ("", "secrets") => config_keys(obj, "data", &mut causes),
        ("apps", "deployments" | "replicasets") => {
            let selector = obj.pointer("/spec/selector");
            let match_labels = selector
                .and_then(|s| s.get("matchLabels"))
                .and_then(Value::as_object);
            let has_exprs = selector
                .and_then(|s| s.get("matchExpressions"))
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if selector.is_none() {
                causes.push(required("spec.selector", ""));
            } else if match_labels.is_none_or(|m| m.is_empty()) && !has_exprs {
                causes.push(invalid_value(
                    "spec.selector",
                    "{}",
                    "empty selector is invalid for deployment",
                ));
            }
            let template_labels = obj
                .pointer("/spec/template/metadata/labels")
                .and_then(Value::as_object);
            if let Some(want) = match_labels {
                let ok = want
                    .iter()
                    .all(|(k, v)| template_labels.and_then(|l| l.get(k)) == Some(v));
                if !ok {
                    causes.push(invalid_json_value(
                        "spec.template.metadata.labels",
                        &template_labels.map_or(Value::Null, |l| Value::Object(l.clone())),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
            containers(
                obj,
                "/spec/template/spec/containers",
                "spec.template.spec.containers",
                &mut causes,
            );
        }
        ("", "services") => {
            let external =
                obj.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
            let ports = obj.pointer("/spec/ports").and_then(Value::as_array);
            if !external && ports.is_none_or(|p| p.is_empty()) {
                causes.push(required("spec.ports", ""));
            }
        }
        _ => {}
    }
    causes
}

/// Writes into a namespace need it to exist (404) and, for creates, not be terminating (403,
/// naming the object `name` when it has one).
pub fn namespace_writable(
    st: &crate::store::State,
    info: &ResourceInfo,
    ns: &str,
    creating: Option<&str>,
) -> ApiResult<()> {
    if !info.namespaced {
        return Ok(());
    }
    let Some(terminating) = st.namespace_terminating(ns) else {
        return Err(ApiError::namespace_not_found(ns));
    };
    if let Some(name) = creating.filter(|_| terminating) {
        let why = format!(
            "unable to create new content in namespace {ns} because it is being terminated"
        );
        let mut e = ApiError::forbidden(info, name, &why);
        e.details.causes = vec![Cause {
            reason: "NamespaceTerminating".into(),
            message: format!("namespace {ns} is being terminated"),
            field: "metadata.namespace".into(),
        }];
        return Err(e);
    }
    Ok(())
}
