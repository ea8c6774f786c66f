//! The naming rules of object metadata and data keys, and apimachinery's messages for them:
//! label and annotation keys (qualified names), label values, DNS names, RBAC names as path
//! segments, ConfigMap and Secret data keys.

use serde_json::Value;

use crate::machinery::meta;
use crate::machinery::status::{Cause, invalid_value};

/// Checks the string map `field` of `md` (labels, annotations): keys must be qualified
/// names, values strings, and label values (`check_values`) valid label values.
pub(crate) fn check_string_map(
    md: Option<&Value>,
    field: &str,
    causes: &mut Vec<Cause>,
    check_values: bool,
) {
    let Some(v) = md.and_then(|m| m.get(field)) else {
        return;
    };
    let Some(map) = v.as_object() else {
        if !v.is_null() {
            causes.push(invalid_value(
                &format!("metadata.{field}"),
                &v.to_string(),
                "must be a map of strings",
            ));
        }
        return;
    };
    for (k, val) in map {
        if qualified_name_problem(k).is_some() {
            causes.push(invalid_value(
                &format!("metadata.{field}"),
                k,
                QUALIFIED_NAME_MESSAGE,
            ));
        }
        match val.as_str() {
            None => causes.push(invalid_value(
                &format!("metadata.{field}"),
                &val.to_string(),
                "must be a string",
            )),
            Some(s) if check_values => {
                if label_value_problem(s).is_some() {
                    causes.push(invalid_value(
                        &format!("metadata.{field}"),
                        s,
                        LABEL_VALUE_MESSAGE,
                    ));
                }
            }
            Some(_) => {}
        }
    }
}

/// Why a label or annotation key is not a qualified name (upstream's `IsQualifiedName`
/// messages, joined).
pub(crate) fn qualified_name_problem(key: &str) -> Option<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return Some(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                QUALIFIED_NAME_RULE
            ));
        }
    };
    let mut problems = Vec::new();
    match prefix {
        Some("") => problems.push("prefix part must be non-empty".to_string()),
        Some(p) if p.len() > 253 => {
            problems.push("prefix part must be no more than 253 characters".to_string());
        }
        Some(p) if !meta::is_dns_subdomain(p) => {
            problems.push(format!("prefix part {}", DNS_SUBDOMAIN_MESSAGE))
        }
        _ => {}
    }
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        problems.push(format!("name part {}", QUALIFIED_NAME_RULE));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

fn is_qualified_name_part(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(name.chars().next())
        && edge(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why a label value is not valid (upstream's `IsValidLabelValue` messages, joined).
pub(crate) fn label_value_problem(value: &str) -> Option<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        problems.push(LABEL_VALUE_MESSAGE.to_string());
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// Why `name` is not a valid path segment (the name rule of RBAC objects), if it is not.
pub(crate) fn path_segment_problem(name: &str) -> Option<&'static str> {
    match name {
        "." => Some("may not be '.'"),
        ".." => Some("may not be '..'"),
        _ if name.contains('/') => Some("may not contain '/'"),
        _ if name.contains('%') => Some("may not contain '%'"),
        _ => None,
    }
}

/// apimachinery's `IsDNS1123Subdomain` message, with its example and regular expression.
pub(crate) const DNS_SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// apimachinery's `IsDNS1123Label` message (namespace names).
pub(crate) const DNS_LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// apimachinery's `IsQualifiedName` rule, as its messages word it after naming the part.
macro_rules! qualified_name_rule {
    () => {
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    };
}

/// apimachinery's `IsQualifiedName` rule (its messages put the part's name before it).
pub(crate) const QUALIFIED_NAME_RULE: &str = qualified_name_rule!();

/// apimachinery's `IsQualifiedName` message for the name part of a key.
const QUALIFIED_NAME_MESSAGE: &str = concat!("name part ", qualified_name_rule!());

/// apimachinery's `IsValidLabelValue` message.
pub(crate) const LABEL_VALUE_MESSAGE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// The keys of a ConfigMap's or Secret's data map must be usable as file names (upstream's
/// `IsConfigMapKey`), one cause per problem.
pub(crate) fn config_keys(obj: &Value, field: &str, causes: &mut Vec<Cause>) {
    const KEY_RULE: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    let Some(map) = obj.get(field).and_then(Value::as_object) else {
        return;
    };
    for key in map.keys() {
        let mut problems = Vec::new();
        if key.len() > 253 {
            problems.push("must be no more than 253 characters");
        }
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            problems.push(KEY_RULE);
        }
        match key.as_str() {
            "." => problems.push("must not be '.'"),
            ".." => problems.push("must not be '..'"),
            k if k.starts_with("..") => problems.push("must not start with '..'"),
            _ => {}
        }
        let at = format!("{field}[{key}]");
        causes.extend(problems.into_iter().map(|why| invalid_value(&at, key, why)));
    }
}
