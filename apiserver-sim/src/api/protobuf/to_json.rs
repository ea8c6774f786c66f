//! A decoded protobuf message as the JSON the same Go object would serialize to: fields
//! under their JSON names, embedded structs flattened, int64 as numbers, bytes as base64,
//! the special messages in their own forms ([`Special`]), and the empty strings that Go's
//! `omitempty` leaves out left out (a protobuf message carries every non-pointer string,
//! set or not).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value as Pb};
use serde_json::{Map, Number, Value};

use super::conventions::{Special, is_inline, json_name, omits_zero, special};
use super::{descriptors, envelope, time};

/// Why a message cannot be rendered as JSON.
pub type Malformed = String;

/// The JSON of a message (None for a message whose JSON is null: the zero time).
pub fn message(msg: &DynamicMessage) -> Result<Option<Value>, Malformed> {
    if let Some(sp) = special(&msg.descriptor()) {
        return special_json(sp, msg);
    }
    let mut out = Map::new();
    fields_into(msg, &mut out)?;
    Ok(Some(Value::Object(out)))
}

/// An enveloped document (`k8s\0` + `runtime.Unknown`) decoded by its own type meta, as
/// JSON with its `apiVersion` and `kind`.
pub fn document(doc: &[u8]) -> Result<Value, Malformed> {
    let env = envelope::unwrap(doc)?;
    let (group, version) = env
        .api_version
        .split_once('/')
        .unwrap_or(("", &env.api_version));
    let desc = descriptors::message(group, version, &env.kind)
        .ok_or_else(|| format!("no protobuf message for {} {}", env.api_version, env.kind))?;
    let msg = DynamicMessage::decode(desc, env.raw.as_slice()).map_err(|e| e.to_string())?;
    let mut v = message(&msg)?.unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(env.api_version));
        m.insert("kind".into(), Value::String(env.kind));
    }
    Ok(v)
}

/// Writes a message's set fields into `out` (embedded fields flattened into it).
fn fields_into(msg: &DynamicMessage, out: &mut Map<String, Value>) -> Result<(), Malformed> {
    for (field, value) in msg.fields() {
        if is_inline(&field)
            && let Pb::Message(inner) = value
        {
            fields_into(inner, out)?;
            continue;
        }
        let json = match value {
            Pb::List(items) => {
                let mut arr = Vec::with_capacity(items.len());
                for it in items {
                    arr.push(element(it)?.unwrap_or(Value::Null));
                }
                Some(Value::Array(arr))
            }
            Pb::Map(entries) => {
                let mut m = Map::new();
                for (k, v) in entries {
                    m.insert(map_key(k), element(v)?.unwrap_or(Value::Null));
                }
                Some(Value::Object(m))
            }
            // An unset Go string and an empty one are the same: `omitempty` drops both.
            Pb::String(s) if s.is_empty() => None,
            v if omits_zero(&field) && is_zero(v) => None,
            v => element(v)?,
        };
        if let Some(j) = json {
            out.insert(json_name(&field), j);
        }
    }
    Ok(())
}

fn is_zero(v: &Pb) -> bool {
    matches!(
        v,
        Pb::Bool(false) | Pb::I32(0) | Pb::I64(0) | Pb::U32(0) | Pb::U64(0)
    )
}

fn map_key(k: &MapKey) -> String {
    match k {
        MapKey::String(s) => s.clone(),
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
    }
}

/// A float as Go prints it: whole numbers without a fraction.
fn float(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// One scalar or message value.
fn element(v: &Pb) -> Result<Option<Value>, Malformed> {
    Ok(Some(match v {
        Pb::Bool(b) => Value::Bool(*b),
        Pb::I32(n) => Value::from(*n),
        Pb::I64(n) => Value::from(*n),
        Pb::U32(n) => Value::from(*n),
        Pb::U64(n) => Value::from(*n),
        Pb::F32(f) => float(f64::from(*f)),
        Pb::F64(f) => float(*f),
        Pb::EnumNumber(n) => Value::from(*n),
        Pb::String(s) => Value::String(s.clone()),
        Pb::Bytes(b) => Value::String(STANDARD.encode(b)),
        Pb::Message(m) => return message(m),
        Pb::List(_) | Pb::Map(_) => return Err("nested repeated field".into()),
    }))
}

fn int_field(msg: &DynamicMessage, name: &str) -> i64 {
    msg.get_field_by_name(name)
        .and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)))
        .unwrap_or(0)
}

fn str_field(msg: &DynamicMessage, name: &str) -> String {
    msg.get_field_by_name(name)
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn has(msg: &DynamicMessage, name: &str) -> bool {
    msg.has_field_by_name(name)
}

/// Raw JSON bytes as a value (null when empty); bytes that are an encoded Kubernetes
/// protobuf object are decoded to its JSON.
fn raw_json(raw: &[u8]) -> Result<Option<Value>, Malformed> {
    if raw.is_empty() {
        return Ok(None);
    }
    if raw.starts_with(envelope::MAGIC) {
        return document(raw).map(Some);
    }
    serde_json::from_slice(raw)
        .map(Some)
        .map_err(|e| format!("raw JSON field: {e}"))
}

fn sub(msg: &DynamicMessage, name: &str) -> Result<Option<Value>, Malformed> {
    match msg.get_field_by_name(name).as_deref() {
        Some(Pb::Message(m)) if has(msg, name) => message(m),
        _ => Ok(None),
    }
}

fn special_json(sp: Special, msg: &DynamicMessage) -> Result<Option<Value>, Malformed> {
    let list = |name: &str| -> Result<Option<Vec<Value>>, Malformed> {
        match msg.get_field_by_name(name).as_deref() {
            Some(Pb::List(items)) if !items.is_empty() => {
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    out.push(element(it)?.unwrap_or(Value::Null));
                }
                Ok(Some(out))
            }
            _ => Ok(None),
        }
    };
    Ok(match sp {
        Special::Time | Special::MicroTime => {
            let (secs, nanos) = (int_field(msg, "seconds"), int_field(msg, "nanos"));
            if !has(msg, "seconds") && !has(msg, "nanos") {
                return Ok(None);
            }
            let micro = sp == Special::MicroTime;
            Some(Value::String(
                time::format(secs, nanos, micro).ok_or("time out of range")?,
            ))
        }
        Special::Duration => Some(Value::String(time::format_duration(int_field(
            msg, "duration",
        )))),
        Special::Quantity => Some(Value::String(str_field(msg, "string"))),
        Special::IntOrString => {
            if int_field(msg, "type") == 1 {
                Some(Value::String(str_field(msg, "strVal")))
            } else {
                Some(Value::from(int_field(msg, "intVal")))
            }
        }
        Special::RawJson => {
            let raw = msg
                .get_field_by_name("raw")
                .or_else(|| msg.get_field_by_name("Raw"))
                .and_then(|v| v.as_bytes().map(|b| b.to_vec()))
                .unwrap_or_default();
            raw_json(&raw)?
        }
        Special::SchemaOrArray => match list("jSONSchemas")? {
            Some(items) => Some(Value::Array(items)),
            None => sub(msg, "schema")?,
        },
        Special::SchemaOrBool => match sub(msg, "schema")? {
            Some(s) => Some(s),
            None => Some(Value::Bool(
                msg.get_field_by_name("allows")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
            )),
        },
        Special::SchemaOrStringArray => match list("property")? {
            Some(items) => Some(Value::Array(items)),
            None => sub(msg, "schema")?,
        },
        Special::StringList => Some(Value::Array(list("items")?.unwrap_or_default())),
    })
}
