//! The type of each value of an object, as server-side apply needs it: for a map, which keys
//! are declared fields and whether it is atomic; for a list, whether it is atomic, a set, or
//! a map keyed by some item fields. Built-in kinds take it from [`super::merge_rules`];
//! custom resources from their CRD's structural schema (`properties`,
//! `additionalProperties`, `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`, `x-kubernetes-preserve-unknown-fields`).

use serde_json::Value;

use super::fieldpath::PathElement;
use super::merge_rules::{self as builtin, B};
use crate::machinery::resource_info::ResourceInfo;

/// The type of a value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty<'s> {
    /// Nothing known (deduced): maps granular with undeclared keys, lists atomic.
    Untyped,
    /// Never compared nor owned (`metadata.managedFields`).
    Ignored,
    /// A built-in type.
    Builtin(B),
    /// The root of a custom resource, with the version's schema (if any).
    CrdRoot(Option<&'s Value>),
    /// A node of a CRD's schema.
    Crd(&'s Value),
}

/// A field's type and how the parent type knows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field<'s> {
    /// The field's type.
    pub ty: Ty<'s>,
    /// A declared struct field (as opposed to a key of a map).
    pub named: bool,
    /// Allowed by the schema (declared, a map key, or kept as an unknown field).
    pub declared: bool,
    /// Always present in the zero value of the parent (a non-pointer Go struct).
    pub present: bool,
}

/// How a list merges.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListKind<'s> {
    /// Replaced and owned as a whole.
    Atomic,
    /// Items are scalars, identified by value.
    Set,
    /// Items are maps identified by these fields (built-in keys).
    Keys(&'static [&'static str]),
    /// Items are maps identified by these fields (from a CRD schema).
    JsonKeys(&'s [Value]),
}

impl ListKind<'_> {
    /// The key field names, in declaration order.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            ListKind::Keys(k) => k.to_vec(),
            ListKind::JsonKeys(k) => k.iter().filter_map(Value::as_str).collect(),
            ListKind::Atomic | ListKind::Set => Vec::new(),
        }
    }
}

/// The kind of scalar a type is, as structured-merge-diff checks values against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// A string.
    String,
    /// An integer or a float.
    Numeric,
    /// A boolean.
    Boolean,
}

/// The type of an object of `info` at `version`.
pub(crate) fn root<'s>(info: &'s ResourceInfo, version: &str) -> Ty<'s> {
    if info.builtin {
        Ty::Builtin(builtin::root(&info.group, &info.kind))
    } else {
        Ty::CrdRoot(
            info.schema(version)
                .or_else(|| info.schema(info.storage_version())),
        )
    }
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

fn crd_field<'s>(node: &'s Value, name: &str) -> Field<'s> {
    if let Some(p) = node.get("properties").and_then(|p| p.get(name)) {
        return Field {
            ty: Ty::Crd(p),
            named: true,
            declared: true,
            present: false,
        };
    }
    let (ty, declared) = match node.get("additionalProperties") {
        Some(extra @ Value::Object(_)) => (Ty::Crd(extra), true),
        Some(Value::Bool(true)) => (Ty::Untyped, true),
        _ => {
            let embedded = flag(node, "x-kubernetes-embedded-resource")
                && matches!(name, "apiVersion" | "kind" | "metadata");
            let open = flag(node, "x-kubernetes-preserve-unknown-fields")
                || node.get("properties").is_none() && node.get("type").is_none();
            (Ty::Untyped, embedded || open)
        }
    };
    Field {
        ty,
        named: false,
        declared,
        present: false,
    }
}

impl<'s> Ty<'s> {
    /// The type of field `name` of a map of this type.
    pub(crate) fn field(self, name: &str) -> Field<'s> {
        let untyped = Field {
            ty: Ty::Untyped,
            named: false,
            declared: true,
            present: false,
        };
        match self {
            Ty::Untyped | Ty::Ignored => untyped,
            Ty::Builtin(b) => {
                let f = builtin::field(b, name);
                Field {
                    ty: f.ty.map_or(Ty::Ignored, Ty::Builtin),
                    named: true,
                    declared: true,
                    present: f.present,
                }
            }
            Ty::CrdRoot(schema) => match name {
                "metadata" => Field {
                    ty: Ty::Builtin(B::ObjectMeta),
                    named: true,
                    declared: true,
                    present: false,
                },
                "apiVersion" | "kind" => Field {
                    named: true,
                    ..untyped
                },
                _ => schema.map_or(untyped, |s| crd_field(s, name)),
            },
            Ty::Crd(node) => crd_field(node, name),
        }
    }

    /// The scalar this type is, if it is one with a kind (a CRD's `string`, `integer`,
    /// `number`, `boolean`; built-in string fields).
    pub(crate) fn scalar(self) -> Option<ScalarKind> {
        match self {
            Ty::Builtin(B::Str) => Some(ScalarKind::String),
            Ty::Crd(node) if !flag(node, "x-kubernetes-int-or-string") => {
                match node.get("type").and_then(Value::as_str)? {
                    "string" => Some(ScalarKind::String),
                    "integer" | "number" => Some(ScalarKind::Numeric),
                    "boolean" => Some(ScalarKind::Boolean),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether a map of this type is merged and owned as a whole.
    pub(crate) fn atomic_map(self) -> bool {
        match self {
            Ty::Builtin(b) => b == B::Atomic,
            Ty::Crd(node) => {
                node.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
            }
            Ty::Untyped | Ty::Ignored | Ty::CrdRoot(_) => false,
        }
    }

    /// How a list of this type merges, and the type of its items.
    pub(crate) fn list(self) -> (ListKind<'s>, Ty<'s>) {
        match self {
            Ty::Builtin(B::List(spec)) => (
                spec.keys.map_or(ListKind::Set, ListKind::Keys),
                Ty::Builtin(spec.item),
            ),
            Ty::Builtin(_) => (ListKind::Atomic, Ty::Builtin(B::Plain)),
            Ty::Crd(node) => {
                let item = node.get("items").map_or(Ty::Untyped, Ty::Crd);
                let kind = match node.get("x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("set") => ListKind::Set,
                    Some("map") => node
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map_or(ListKind::Atomic, |k| ListKind::JsonKeys(k.as_slice())),
                    _ => ListKind::Atomic,
                };
                (kind, item)
            }
            Ty::Untyped | Ty::Ignored | Ty::CrdRoot(_) => (ListKind::Atomic, Ty::Untyped),
        }
    }

    /// The default of key field `key` for items of this type, if the schema has one.
    fn key_default(self, key: &str) -> Option<Value> {
        match self {
            Ty::Builtin(b) => builtin::key_default(b, key),
            Ty::Crd(node) => node.get("properties")?.get(key)?.get("default").cloned(),
            _ => None,
        }
    }
}

/// The path element naming `item` in a list of kind `kind` with items of type `item_ty`;
/// the error says why the item cannot be named (as structured-merge-diff words it).
pub(crate) fn item_element(
    kind: ListKind<'_>,
    item_ty: Ty<'_>,
    item: &Value,
    index: usize,
) -> Result<PathElement, String> {
    match kind {
        ListKind::Atomic => Ok(PathElement::Index(index)),
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            scalar => Ok(PathElement::Value(scalar.clone())),
        },
        ListKind::Keys(_) | ListKind::JsonKeys(_) => {
            let Value::Object(map) = item else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".into()
                } else {
                    "associative list with keys may not have non-map elements".into()
                });
            };
            let keys = kind.keys();
            let mut fields: Vec<(String, Value)> = keys
                .iter()
                .filter_map(|k| {
                    let v = map.get(*k).cloned().or_else(|| item_ty.key_default(k))?;
                    Some(((*k).to_string(), v))
                })
                .collect();
            if fields.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
    }
}
