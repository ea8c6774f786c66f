//! Structural-schema checks and defaults for custom resources (a practical subset of
//! OpenAPI v3 validation: type, required, enum, minimum/maximum, length and item bounds,
//! properties/items/additionalProperties, `default`). CEL rules, `pattern` and pruning are
//! not implemented.

use serde_json::{Map, Value};

use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{Cause, invalid_json_value as cause, required};

fn type_ok(ty: &str, v: &Value, schema: &Value) -> bool {
    if v.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return true;
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return v.is_i64() || v.is_u64() || v.is_string();
    }
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

/// A value's type as OpenAPI validation names it.
fn openapi_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(schema: &Value, v: &Value, path: &str, out: &mut Vec<Cause>) {
    if let Some(ty) = schema.get("type").and_then(Value::as_str)
        && !type_ok(ty, v, schema)
    {
        // The value upstream's validator reports is the data's own type.
        let actual = openapi_type(v);
        out.push(Cause {
            reason: "FieldValueTypeInvalid".into(),
            message: format!(
                "Invalid value: {actual:?}: {path} in body must be of type {ty}: {actual:?}"
            ),
            field: path.to_string(),
        });
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let message = format!(
            "Unsupported value: {v}: supported values: {}",
            list.join(", ")
        );
        out.push(Cause::typed(path, &message));
    }
    if let Some(n) = v.as_f64() {
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            out.push(cause(
                path,
                v,
                &format!("{path} in body should be less than or equal to {max}"),
            ));
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            out.push(cause(
                path,
                v,
                &format!("{path} in body should be greater than or equal to {min}"),
            ));
        }
    }
    if let Some(s) = v.as_str() {
        let len = s.chars().count() as u64;
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            let message = format!("Too long: may not be more than {max} bytes");
            out.push(Cause::typed(path, &message));
        }
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            out.push(cause(
                path,
                v,
                &format!("{path} in body should be at least {min} chars long"),
            ));
        }
    }
    if let Some(items) = v.as_array() {
        let len = items.len() as u64;
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            let message = format!("Too many: {len}: must have at most {max} items");
            out.push(Cause::typed(path, &message));
        }
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            out.push(cause(
                path,
                v,
                &format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, it) in items.iter().enumerate() {
                check(item_schema, it, &format!("{path}[{i}]"), out);
            }
        }
    }
    if let Some(map) = v.as_object() {
        missing_required(schema, map, path, out);
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, child) in map {
            if let Some(s) = props.and_then(|p| p.get(k)) {
                check(s, child, &join(path, k), out);
            } else if let Some(s) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                check(s, child, &join(path, k), out);
            }
        }
    }
}

/// A cause for each field the schema's `required` lists that `map` lacks.
fn missing_required(schema: &Value, map: &Map<String, Value>, path: &str, out: &mut Vec<Cause>) {
    for r in crate::machinery::pointer::strings(schema, "/required") {
        if !map.contains_key(r) {
            out.push(required(&join(path, r), ""));
        }
    }
}

fn join(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// Validates a custom resource against its storage version's schema (top-level
/// `apiVersion`, `kind` and `metadata` are not checked).
pub fn validate(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(schema) = info.schema(info.storage_version()) else {
        return out;
    };
    let (Some(map), Some(props)) = (
        obj.as_object(),
        schema.get("properties").and_then(Value::as_object),
    ) else {
        return out;
    };
    for (k, v) in map {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(s) = props.get(k) {
            check(s, v, k, &mut out);
        }
    }
    missing_required(schema, map, "", &mut out);
    if let Some(scale) = &info.scale {
        out.extend(spec_replicas_problem(obj, &scale.spec_replicas));
    }
    out
}

/// What upstream finds wrong with the replicas a scale subresource reads (`specReplicasPath`,
/// given with its leading dot): not an integer, negative, or beyond an int32.
fn spec_replicas_problem(obj: &Value, path: &str) -> Option<Cause> {
    let value = obj.pointer(&crate::machinery::resource_info::ScalePaths::pointer(path))?;
    let invalid =
        |shown: &str, why: String| Cause::typed(path, &format!("Invalid value: {shown}: {why}"));
    let Some(replicas) = value.as_i64() else {
        use crate::machinery::go_fmt::{go_format, go_type};
        return Some(invalid(
            "0",
            format!(
                "{path} accessor error: {} is of the type {}, expected int64",
                go_format(value),
                go_type(value)
            ),
        ));
    };
    if replicas < 0 {
        return Some(invalid(
            &replicas.to_string(),
            "should be a non-negative integer".into(),
        ));
    }
    let max = i64::from(i32::MAX);
    (replicas > max).then(|| {
        invalid(
            &replicas.to_string(),
            format!("should be less than or equal to {max}"),
        )
    })
}

fn defaults(schema: &Value, v: &mut Value) {
    let Some(map) = v.as_object_mut() else {
        if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array_mut()) {
            for it in arr {
                defaults(items, it);
            }
        }
        return;
    };
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, s) in props {
        if !map.contains_key(k)
            && let Some(d) = s.get("default")
        {
            map.insert(k.clone(), d.clone());
        }
        if let Some(child) = map.get_mut(k) {
            defaults(s, child);
        }
    }
}

fn preserves(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

fn prune_node(schema: &Value, v: &mut Value, path: &str, out: &mut Vec<String>) {
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return;
    }
    match v {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let embedded = schema
                .get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true);
            let keep_unknown = preserves(schema)
                || schema.get("additionalProperties").and_then(Value::as_bool) == Some(true);
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let child_path = join(path, &k);
                if let Some(s) = props.and_then(|p| p.get(&k)) {
                    if let Some(child) = map.get_mut(&k) {
                        prune_node(s, child, &child_path, out);
                    }
                } else if let Some(s) = additional {
                    if let Some(child) = map.get_mut(&k) {
                        prune_node(s, child, &child_path, out);
                    }
                } else if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                } else if !keep_unknown {
                    map.remove(&k);
                    out.push(child_path);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, it) in items.iter_mut().enumerate() {
                    prune_node(s, it, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// Removes fields the schema of `version` does not declare (unless it preserves unknown
/// fields); returns their paths. Objects of a CRD version without a schema are kept whole.
pub fn prune(info: &ResourceInfo, version: &str, obj: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(schema) = info
        .schema(version)
        .or_else(|| info.schema(info.storage_version()))
    else {
        return out;
    };
    if preserves(schema) {
        return out;
    }
    let Some(map) = obj.as_object_mut() else {
        return out;
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        match props.and_then(|p| p.get(&k)) {
            Some(s) => {
                if let Some(child) = map.get_mut(&k) {
                    prune_node(s, child, &k, &mut out);
                }
            }
            None => {
                map.remove(&k);
                out.push(k);
            }
        }
    }
    out
}

/// Applies schema `default`s of the given version (custom resources; of built-ins, only the
/// webhook configurations have defaults filled here).
pub fn apply_defaults(info: &ResourceInfo, version: &str, obj: &mut Value) {
    if info.builtin {
        if crate::kinds::webhook_configuration::is_webhook_configuration(info) {
            crate::kinds::webhook_configuration::default(obj);
        }
        crate::kinds::defaults::apply(info, obj);
        return;
    }
    let Some(schema) = info
        .schema(version)
        .or_else(|| info.schema(info.storage_version()))
    else {
        return;
    };
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, s) in props {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if !map.contains_key(k)
            && let Some(d) = s.get("default")
        {
            map.insert(k.clone(), d.clone());
        }
        if let Some(child) = map.get_mut(k) {
            defaults(s, child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_bounds_types_required() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["name"],
            "properties": {"replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                           "name": {"type": "string", "maxLength": 3},
                           "mode": {"type": "string", "enum": ["a", "b"]}}}}});
        let mut out = Vec::new();
        check(
            &s,
            &json!({"spec": {"replicas": 11, "name": "abcd", "mode": "c"}}),
            "",
            &mut out,
        );
        let fields: Vec<&str> = out.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, vec!["spec.mode", "spec.name", "spec.replicas"]);
        let mut out = Vec::new();
        check(&s, &json!({"spec": {"replicas": "x"}}), "", &mut out);
        assert_eq!(out.len(), 2);
        let mut v = json!({"spec": {"name": "a"}});
        defaults(&s, &mut v);
        assert_eq!(v["spec"]["replicas"], 1);
        let mut v = json!({"spec": {"name": "a", "extra": 1, "nested": {"x": 1}}});
        let mut out = Vec::new();
        prune_node(&s, &mut v, "", &mut out);
        assert_eq!(
            out,
            vec!["spec.extra".to_string(), "spec.nested".to_string()]
        );
        assert_eq!(v, json!({"spec": {"name": "a"}}));
    }
}
