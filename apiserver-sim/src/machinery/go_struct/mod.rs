//! Values of kube-apiserver's internal types as its field errors print them: a field error
//! whose value is a struct (`spec.template.spec: Invalid value: {"Volumes":[…],…}: field is
//! immutable`) carries Go's `json.Marshal` of the internal type, which has no JSON tags —
//! every field under its Go name, in declaration order, nil pointers, slices and maps as
//! `null`, unset scalars as their zero values, embedded structs' fields promoted, strings
//! escaped as Go escapes them (`<`, `>` and `&` too), map keys sorted.
//!
//! [`dump`] renders a served (v1) JSON value as such a dump, from the layout of the internal
//! types in `core_types.rs`; [`diff`] prints two of them as apimachinery's `diff.Diff` does. A type it does not describe (a few rare volume sources) is
//! written from its JSON with each key's first letter in upper case.

mod core_types;
pub mod diff;

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

/// One field of an internal type.
struct Field {
    /// Its Go name (the key of the dump).
    go: String,
    /// Its name in the served JSON.
    json: String,
    /// Its kind (see `core_types.rs`).
    kind: String,
}

static TYPES: LazyLock<HashMap<&'static str, Vec<Field>>> = LazyLock::new(|| {
    core_types::TYPES
        .lines()
        .filter_map(|line| line.split_once(": "))
        .map(|(name, fields)| (name, fields.split_whitespace().map(field).collect()))
        .collect()
});

/// `Go:kind`, `Go=json:kind` or an embedded `~Type`.
fn field(spec: &str) -> Field {
    if spec.starts_with('~') {
        return Field {
            go: String::new(),
            json: String::new(),
            kind: spec.to_string(),
        };
    }
    let (name, kind) = spec.split_once(':').unwrap_or((spec, "s"));
    let (go, json) = match name.split_once('=') {
        Some((go, json)) => (go.to_string(), json.to_string()),
        None => (name.to_string(), json_name(name)),
    };
    Field {
        go,
        json,
        kind: kind.to_string(),
    }
}

/// The served JSON name of a Go field: its leading initialism in lower case.
fn json_name(go: &str) -> String {
    let chars: Vec<char> = go.chars().collect();
    let upper = chars.iter().take_while(|c| c.is_ascii_uppercase()).count();
    // `DNSPolicy`: the last capital of the run starts the next word.
    let lower = if upper > 1 && upper < chars.len() {
        upper - 1
    } else {
        upper.max(1)
    };
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i < lower {
                c.to_ascii_lowercase()
            } else {
                *c
            }
        })
        .collect()
}

/// Whether two served values are equal as apimachinery's semantic equality compares their
/// internal forms: a nil and an empty slice alike.
pub fn semantically_equal(a: &Value, b: &Value) -> bool {
    fn semantic(v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
                    .map(|(k, v)| (k.clone(), semantic(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
            other => other.clone(),
        }
    }
    semantic(a) == semantic(b)
}

/// Go's `json.Marshal` of the internal type `type_name` holding the served JSON `v`.
pub fn dump(type_name: &str, v: &Value) -> String {
    let mut out = String::new();
    write_struct(&mut out, type_name, v);
    out
}

fn write_struct(out: &mut String, type_name: &str, v: &Value) {
    out.push('{');
    let mut first = true;
    write_fields(out, type_name, v, &mut first);
    out.push('}');
}

/// The fields of `type_name` (embedded ones promoted), without braces.
fn write_fields(out: &mut String, type_name: &str, v: &Value, first: &mut bool) {
    let Some(fields) = TYPES.get(type_name) else {
        write_fallback_fields(out, v, first);
        return;
    };
    let host = (type_name == "PodSpec").then(|| pod_security_context(v));
    for f in fields {
        if f.kind == "~meta" {
            write_object_meta(out, v.get("metadata"), first);
            continue;
        }
        if let Some(embedded) = f.kind.strip_prefix('~') {
            write_fields(out, embedded, v, first);
            continue;
        }
        if !std::mem::take(first) {
            out.push(',');
        }
        write_string(out, &f.go);
        out.push(':');
        let value = match (&host, f.go.as_str()) {
            (Some(sc), "SecurityContext") => Some(sc),
            _ => v.get(&f.json),
        };
        write_kind(out, &f.kind, value);
    }
}

/// The internal pod spec's security context: the served one with the pod's host namespaces
/// and user namespace, which the served form keeps in the spec itself.
fn pod_security_context(spec: &Value) -> Value {
    let mut sc = spec
        .get("securityContext")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    for key in [
        "hostNetwork",
        "hostPID",
        "hostIPC",
        "shareProcessNamespace",
        "hostUsers",
    ] {
        if let (Some(v), Some(m)) = (spec.get(key), sc.as_object_mut()) {
            m.insert(key.to_string(), v.clone());
        }
    }
    sc
}

fn write_kind(out: &mut String, kind: &str, v: Option<&Value>) {
    let v = v.filter(|v| !v.is_null());
    if let Some(inner) = kind.strip_prefix('*') {
        match v {
            Some(v) => write_kind(out, inner, Some(v)),
            None => out.push_str("null"),
        }
        return;
    }
    if let Some(item) = kind.strip_prefix("[]") {
        match v.and_then(Value::as_array) {
            Some(items) => {
                out.push('[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_kind(out, item, Some(it));
                }
                out.push(']');
            }
            None => out.push_str("null"),
        }
        return;
    }
    match (kind, v) {
        ("s", v) => write_string(out, v.and_then(Value::as_str).unwrap_or_default()),
        ("i" | "io", None) => out.push('0'),
        ("q", None) => out.push_str("\"0\""),
        ("b", None) => out.push_str("false"),
        ("i" | "io" | "q" | "b", Some(v)) => write_json(out, v),
        ("map" | "sel", None) => out.push_str("null"),
        ("map", Some(v)) => write_json(out, v),
        ("sel", Some(v)) => write_label_selector(out, v),
        (type_name, v) => write_struct(out, type_name, v.unwrap_or(&Value::Null)),
    }
}

/// A `metav1.LabelSelector` (JSON-tagged, empty fields left out, in Go's field order).
fn write_label_selector(out: &mut String, v: &Value) {
    out.push('{');
    let mut first = true;
    for key in ["matchLabels", "matchExpressions"] {
        let Some(field) = v.get(key).filter(|f| !is_empty(f)) else {
            continue;
        };
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        match field.as_array() {
            Some(reqs) => {
                out.push('[');
                for (i, r) in reqs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_ordered(out, r, &["key", "operator", "values"]);
                }
                out.push(']');
            }
            None => write_json(out, field),
        }
    }
    out.push('}');
}

/// The JSON-tagged fields of an embedded `metav1.ObjectMeta`, empty ones left out.
fn write_object_meta(out: &mut String, meta: Option<&Value>, first: &mut bool) {
    const ORDER: &[&str] = &[
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    ];
    for key in ORDER {
        let Some(v) = meta.and_then(|m| m.get(*key)).filter(|v| !is_empty(v)) else {
            continue;
        };
        if !std::mem::take(first) {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_json(out, v);
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
    }
}

fn write_ordered(out: &mut String, v: &Value, order: &[&str]) {
    out.push('{');
    let mut first = true;
    for key in order {
        if let Some(field) = v.get(*key).filter(|f| !is_empty(f)) {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
            write_string(out, key);
            out.push(':');
            write_json(out, field);
        }
    }
    out.push('}');
}

/// A type not described: its JSON's fields under Go-style names.
fn write_fallback_fields(out: &mut String, v: &Value, first: &mut bool) {
    let Some(map) = v.as_object() else {
        return;
    };
    for (k, field) in map {
        if !std::mem::take(first) {
            out.push(',');
        }
        let mut chars = k.chars();
        let go: String = chars
            .next()
            .map(|c| c.to_ascii_uppercase())
            .into_iter()
            .chain(chars)
            .collect();
        write_string(out, &go);
        out.push(':');
        write_json(out, field);
    }
}

/// Plain JSON as Go writes it: map keys sorted, Go's string escaping.
fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, it);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_json(out, &map[k]);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A string as Go's `encoding/json` writes it (HTML-safe).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_names_lower_the_leading_initialism() {
        for (go, json) in [
            ("DNSPolicy", "dnsPolicy"),
            ("TTY", "tty"),
            ("IP", "ip"),
            ("HostPID", "hostPID"),
            ("SELinuxOptions", "seLinuxOptions"),
            ("GMSACredentialSpec", "gmsaCredentialSpec"),
            ("Name", "name"),
        ] {
            assert_eq!(json_name(go), json);
        }
    }

    #[test]
    fn structs_print_every_field_under_its_go_name() {
        let volume = json!({"name": "d1", "persistentVolumeClaim": {"claimName": "c<1>"}});
        let out = dump("Volume", &volume);
        assert!(out.starts_with(r#"{"Name":"d1","HostPath":null,"EmptyDir":null,"#));
        assert!(out.contains(
            r#""PersistentVolumeClaim":{"ClaimName":"c\u003c1\u003e","ReadOnly":false}"#
        ));
        assert!(out.ends_with(r#""Ephemeral":null,"Image":null}"#));
        let driver = json!({"name": "b.example.com", "nodeID": "n3"});
        assert_eq!(
            dump("CSINodeDriver", &driver),
            r#"{"Name":"b.example.com","NodeID":"n3","TopologyKeys":null,"Allocatable":null}"#
        );
    }

    #[test]
    fn a_pod_specs_host_namespaces_sit_in_its_security_context() {
        let spec = json!({"containers": [], "hostNetwork": true, "securityContext": {}});
        let out = dump("PodSpec", &spec);
        assert!(out.contains(r#""SecurityContext":{"HostNetwork":true,"HostPID":false,"#));
        assert!(out.contains(r#""Containers":[],"#));
        assert!(out.contains(r#""Volumes":null,"#));
    }
}
