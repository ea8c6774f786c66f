//! Reading objects held as JSON and the text forms upstream printers share: label maps
//! and selectors, container names and images, "a,b,c + N more..." lists.

use serde_json::Value;

pub use crate::machinery::pointer::{int, strings, text as s};

/// The `Name` cell: `metadata.name`.
pub fn name(obj: &Value) -> Value {
    Value::from(s(obj, "/metadata/name"))
}

/// The string at a JSON pointer, or `default` when absent or empty.
pub fn s_or<'a>(obj: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    match s(obj, ptr) {
        "" => default,
        v => v,
    }
}

/// The array at a JSON pointer, or an empty slice.
pub fn arr<'a>(obj: &'a Value, ptr: &str) -> &'a [Value] {
    obj.pointer(ptr)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Whether a JSON pointer names a present, non-null value.
pub fn has(obj: &Value, ptr: &str) -> bool {
    obj.pointer(ptr).is_some_and(|v| !v.is_null())
}

/// The number of entries of the object or array at a JSON pointer.
pub fn len(obj: &Value, ptr: &str) -> i64 {
    match obj.pointer(ptr) {
        Some(Value::Object(m)) => m.len() as i64,
        Some(Value::Array(a)) => a.len() as i64,
        _ => 0,
    }
}

/// An int-or-string value as text (`3`, `"50%"`).
pub fn int_or_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// A label map as `k=v,k2=v2` (sorted), `<none>` when empty (upstream
/// `labels.FormatLabels`).
pub fn labels(map: Option<&Value>) -> String {
    let Some(m) = map.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// A `metav1.LabelSelector` in selector syntax (`a=b,c in (d,e),!f`), sorted by key as
/// upstream's `LabelSelectorAsSelector(...).String()`; "" for a missing or empty selector;
/// `Err` for an unknown operator.
pub fn selector(sel: Option<&Value>) -> Result<String, ()> {
    let Some(sel) = sel.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in arr(sel, "/matchExpressions") {
        let key = s(e, "/key");
        let mut values = strings(e, "/values");
        values.sort_unstable();
        let text = match s(e, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return Err(()),
        };
        reqs.push((key.to_string(), text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(","))
}

/// A label selector as printed in a table (upstream `metav1.FormatLabelSelector`):
/// `<none>` when it selects everything, `<error>` when it cannot be parsed.
pub fn label_selector(sel: Option<&Value>) -> String {
    match selector(sel) {
        Ok(s) if s.is_empty() => "<none>".into(),
        Ok(s) => s,
        Err(()) => "<error>".into(),
    }
}

/// The `CONTAINERS` and `IMAGES` cells: names and images joined by commas.
pub fn containers(list: &[Value]) -> (String, String) {
    let names: Vec<&str> = list.iter().map(|c| s(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| s(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// Up to `max` entries joined by commas, then ` + N more...`; `<unset>` when empty
/// (upstream `listWithMoreString`).
pub fn list_with_more(all: &[String], max: usize) -> String {
    let shown = all.iter().take(max).cloned().collect::<Vec<_>>().join(",");
    if all.len() > max {
        return format!("{shown} + {} more...", all.len() - max);
    }
    if shown.is_empty() {
        return "<unset>".into();
    }
    shown
}

/// `True`/`False` for a set boolean, `<unset>` otherwise.
pub fn bool_ptr(v: Option<&Value>) -> String {
    match v.and_then(Value::as_bool) {
        Some(true) => "True".into(),
        Some(false) => "False".into(),
        None => "<unset>".into(),
    }
}

/// `spec.replicas`, 1 when unset (the value the API server defaults it to).
pub fn replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// IPs (or hostnames) of load-balancer ingress points, sorted and unique, comma-joined.
pub fn load_balancer(status: Option<&Value>) -> String {
    let mut all: Vec<&str> = status
        .and_then(|s| s.get("ingress"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|i| s_or(i, "/ip", s(i, "/hostname")))
                .filter(|v| !v.is_empty())
                .collect()
        })
        .unwrap_or_default();
    all.sort_unstable();
    all.dedup();
    all.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors_and_labels() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                 {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(label_selector(Some(&sel)), "a=1,b=2,c in (x,y),!d");
        assert_eq!(label_selector(Some(&json!({}))), "<none>");
        assert_eq!(label_selector(None), "<none>");
        let bad = json!({"matchExpressions": [{"key": "c", "operator": "Near"}]});
        assert_eq!(label_selector(Some(&bad)), "<error>");
        assert_eq!(labels(Some(&json!({"z": "1", "a": "2"}))), "a=2,z=1");
        assert_eq!(labels(None), "<none>");
        let more: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(list_with_more(&more, 3), "a,b,c + 2 more...");
        assert_eq!(list_with_more(&[], 3), "<unset>");
    }
}
