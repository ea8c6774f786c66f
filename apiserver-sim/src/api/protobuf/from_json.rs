//! A JSON object as the protobuf message of its type, following the Kubernetes JSON
//! conventions ([`Special`] forms, embedded structs, JSON names, base64 bytes). Fields the
//! message does not know, and values of the wrong JSON type, are left out: the stored
//! objects were checked against their typed structs when written, so this only drops
//! what a Go client could not decode either.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage, Value as Pb,
};
use serde_json::{Map, Value};

use super::conventions::{Special, is_inline, json_name, special};
use super::time;

/// The message `desc` for a JSON value (None when the value cannot be one).
pub fn message(desc: &MessageDescriptor, v: &Value) -> Option<DynamicMessage> {
    if let Some(sp) = special(desc) {
        return special_message(sp, desc, v);
    }
    let obj = v.as_object()?;
    Some(object_message(desc, obj))
}

/// The message of an object's fields (embedded messages take theirs from the same object).
fn object_message(desc: &MessageDescriptor, obj: &Map<String, Value>) -> DynamicMessage {
    let mut msg = DynamicMessage::new(desc.clone());
    for field in desc.fields() {
        if is_inline(&field) {
            if let Kind::Message(inner) = field.kind() {
                let sub = object_message(&inner, obj);
                if sub.fields().next().is_some() {
                    let _ = msg.try_set_field(&field, Pb::Message(sub));
                }
            }
            continue;
        }
        let Some(v) = obj.get(&json_name(&field)) else {
            continue;
        };
        if let Some(pb) = field_value(&field, v) {
            let _ = msg.try_set_field(&field, pb);
        }
    }
    msg
}

fn field_value(field: &FieldDescriptor, v: &Value) -> Option<Pb> {
    if v.is_null() {
        return None;
    }
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else {
            return None;
        };
        let value_field = entry.map_entry_value_field();
        let mut out = HashMap::new();
        for (k, item) in v.as_object()? {
            if let Some(pb) = scalar(&value_field.kind(), item) {
                out.insert(MapKey::String(k.clone()), pb);
            }
        }
        return Some(Pb::Map(out));
    }
    if field.is_list() {
        let items = v
            .as_array()?
            .iter()
            .filter_map(|it| scalar(&field.kind(), it))
            .collect();
        return Some(Pb::List(items));
    }
    scalar(&field.kind(), v)
}

/// A singular value of a kind.
fn scalar(kind: &Kind, v: &Value) -> Option<Pb> {
    Some(match kind {
        Kind::Bool => Pb::Bool(v.as_bool()?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Pb::I32(i32::try_from(v.as_i64()?).ok()?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Pb::I64(v.as_i64()?),
        Kind::Uint32 | Kind::Fixed32 => Pb::U32(u32::try_from(v.as_u64()?).ok()?),
        Kind::Uint64 | Kind::Fixed64 => Pb::U64(v.as_u64()?),
        Kind::Float => Pb::F32(v.as_f64()? as f32),
        Kind::Double => Pb::F64(v.as_f64()?),
        Kind::String => Pb::String(v.as_str()?.to_string()),
        Kind::Bytes => Pb::Bytes(STANDARD.decode(v.as_str()?).ok()?.into()),
        Kind::Enum(_) => Pb::EnumNumber(i32::try_from(v.as_i64()?).ok()?),
        Kind::Message(m) => Pb::Message(message(m, v)?),
    })
}

fn set(msg: &mut DynamicMessage, name: &str, v: Pb) {
    if let Some(f) = msg.descriptor().get_field_by_name(name) {
        let _ = msg.try_set_field(&f, v);
    }
}

/// The message of a schema field (`schema`) of a union.
fn schema_in(desc: &MessageDescriptor, name: &str, v: &Value) -> Option<Pb> {
    let f = desc.get_field_by_name(name)?;
    let Kind::Message(m) = f.kind() else {
        return None;
    };
    Some(Pb::Message(message(&m, v)?))
}

fn special_message(sp: Special, desc: &MessageDescriptor, v: &Value) -> Option<DynamicMessage> {
    let mut msg = DynamicMessage::new(desc.clone());
    match sp {
        Special::Time | Special::MicroTime => {
            let (secs, nanos) = time::parse(v.as_str()?)?;
            set(&mut msg, "seconds", Pb::I64(secs));
            // `Time` keeps seconds only (upstream drops the nanoseconds on decode too).
            let nanos = if sp == Special::MicroTime {
                nanos - nanos % 1000
            } else {
                0
            };
            set(&mut msg, "nanos", Pb::I32(nanos));
        }
        Special::Duration => {
            set(
                &mut msg,
                "duration",
                Pb::I64(time::parse_duration(v.as_str()?)?),
            );
        }
        Special::Quantity => set(&mut msg, "string", Pb::String(quantity(v)?)),
        Special::IntOrString => match v {
            Value::String(s) => {
                set(&mut msg, "type", Pb::I64(1));
                set(&mut msg, "strVal", Pb::String(s.clone()));
            }
            _ => {
                set(&mut msg, "type", Pb::I64(0));
                set(
                    &mut msg,
                    "intVal",
                    Pb::I32(i32::try_from(v.as_i64()?).ok()?),
                );
            }
        },
        Special::RawJson => {
            let name = if desc.get_field_by_name("raw").is_some() {
                "raw"
            } else {
                "Raw"
            };
            set(
                &mut msg,
                name,
                Pb::Bytes(serde_json::to_vec(v).ok()?.into()),
            );
        }
        Special::SchemaOrArray => match v {
            Value::Array(items) => {
                let f = desc.get_field_by_name("jSONSchemas")?;
                let Kind::Message(m) = f.kind() else {
                    return None;
                };
                let list = items
                    .iter()
                    .filter_map(|it| message(&m, it).map(Pb::Message))
                    .collect();
                let _ = msg.try_set_field(&f, Pb::List(list));
            }
            _ => set(&mut msg, "schema", schema_in(desc, "schema", v)?),
        },
        Special::SchemaOrBool => match v {
            Value::Bool(b) => set(&mut msg, "allows", Pb::Bool(*b)),
            _ => {
                set(&mut msg, "allows", Pb::Bool(true));
                set(&mut msg, "schema", schema_in(desc, "schema", v)?);
            }
        },
        Special::SchemaOrStringArray => match v {
            Value::Array(items) => {
                let list = items
                    .iter()
                    .filter_map(|s| Some(Pb::String(s.as_str()?.to_string())))
                    .collect();
                set(&mut msg, "property", Pb::List(list));
            }
            _ => set(&mut msg, "schema", schema_in(desc, "schema", v)?),
        },
        Special::StringList => {
            let list = v
                .as_array()?
                .iter()
                .filter_map(|s| Some(Pb::String(s.as_str()?.to_string())))
                .collect();
            set(&mut msg, "items", Pb::List(list));
        }
    }
    Some(msg)
}

/// A quantity's string (JSON numbers are accepted as quantities too, as upstream does).
fn quantity(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
