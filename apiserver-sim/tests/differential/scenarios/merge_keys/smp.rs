//! The strategic merge patch `kubectl apply` sends to turn one object into another, computed
//! from the served schemas as apimachinery's two-way patch computes it: changed fields only,
//! list items of a merged list by their merge key (new ones whole, changed ones as their own
//! patch with the key, removed ones as `$patch: delete`) with the list's
//! `$setElementOrder/<field>`, `$retainKeys` for objects whose strategy retains keys, and
//! every other list whole.

use serde_json::{Map, Value, json};

use super::schema_walk::{Field, Schemas};

/// The patch from `orig` to `desired`, objects of schema `schema`.
pub fn diff(schemas: &Schemas, schema: Option<&str>, orig: &Value, desired: &Value) -> Value {
    Value::Object(object(schemas, schema, orig, desired, false))
}

fn object(
    schemas: &Schemas,
    schema: Option<&str>,
    orig: &Value,
    desired: &Value,
    retain_keys: bool,
) -> Map<String, Value> {
    let mut patch = Map::new();
    let empty = Map::new();
    let (o, d) = (
        orig.as_object().unwrap_or(&empty),
        desired.as_object().unwrap_or(&empty),
    );
    for (k, dv) in d {
        let Some(ov) = o.get(k) else {
            patch.insert(k.clone(), dv.clone());
            continue;
        };
        if ov == dv {
            continue;
        }
        let field = schema.and_then(|s| schemas.field(s, k)).unwrap_or_default();
        match (ov, dv) {
            (Value::Object(_), Value::Object(_)) if !field.has("replace") => {
                let inner = if field.map {
                    map(schemas, &field, ov, dv)
                } else {
                    object(
                        schemas,
                        field.target.as_deref(),
                        ov,
                        dv,
                        field.has("retainKeys"),
                    )
                };
                patch.insert(k.clone(), Value::Object(inner));
            }
            (Value::Array(ol), Value::Array(dl)) if field.has("merge") && field.key.is_some() => {
                let (items, order) = list(schemas, &field, ol, dl);
                patch.insert(k.clone(), Value::Array(items));
                patch.insert(format!("$setElementOrder/{k}"), Value::Array(order));
            }
            _ => {
                patch.insert(k.clone(), dv.clone());
            }
        }
    }
    for k in o.keys().filter(|k| !d.contains_key(*k)) {
        patch.insert(k.clone(), Value::Null);
    }
    if retain_keys && !patch.is_empty() {
        let mut keys: Vec<&String> = d.keys().collect();
        keys.sort();
        patch.insert("$retainKeys".into(), json!(keys));
    }
    patch
}

/// A map whose values are objects of `field.target`.
fn map(schemas: &Schemas, field: &Field, orig: &Value, desired: &Value) -> Map<String, Value> {
    let values = Field {
        target: field.target.clone(),
        ..Field::default()
    };
    let mut patch = Map::new();
    for (k, dv) in desired.as_object().into_iter().flatten() {
        match orig.get(k) {
            Some(ov) if ov == dv => {}
            Some(ov) => {
                let inner = object(schemas, values.target.as_deref(), ov, dv, false);
                patch.insert(k.clone(), Value::Object(inner));
            }
            None => {
                patch.insert(k.clone(), dv.clone());
            }
        }
    }
    patch
}

/// A merged list's items to send and its `$setElementOrder`.
fn list(
    schemas: &Schemas,
    field: &Field,
    orig: &[Value],
    desired: &[Value],
) -> (Vec<Value>, Vec<Value>) {
    let key = field.key.as_deref().unwrap_or_default();
    let retain = field.has("retainKeys");
    let mut items = Vec::new();
    for d in desired {
        let k = &d[key];
        match orig.iter().find(|o| &o[key] == k) {
            None => items.push(d.clone()),
            Some(o) if o == d => {}
            Some(o) => {
                let mut p = object(schemas, field.target.as_deref(), o, d, retain);
                p.insert(key.to_string(), k.clone());
                items.push(Value::Object(p));
            }
        }
    }
    for o in orig {
        if !desired.iter().any(|d| d[key] == o[key]) {
            items.push(json!({key: o[key], "$patch": "delete"}));
        }
    }
    let order = desired.iter().map(|d| json!({key: d[key]})).collect();
    (items, order)
}
