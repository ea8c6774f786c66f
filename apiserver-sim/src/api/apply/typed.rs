//! Walks over values with their types: the set of paths a value sets ([`to_field_set`]),
//! what changed between two values ([`compare`]), and the checks an applied configuration
//! must pass ([`validate`]), following structured-merge-diff.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, path_string};
use super::schema::{ListKind, ScalarKind, Ty, item_element};
use super::set::FieldSet;
use crate::machinery::go_fmt::{go_format, go_sharp_format, go_type};

/// Fields added, changed and removed between two versions of an object.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    /// Present only in the new value.
    pub added: FieldSet,
    /// Present in both, with different values.
    pub modified: FieldSet,
    /// Present only in the old value.
    pub removed: FieldSet,
}

static EMPTY: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::Object(Map::new()));

fn empty_map(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    }
}

fn empty_list(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

/// The path element of each item of a list, in order (an item that cannot be named by the
/// list's keys is named by its position).
pub(crate) fn elements(kind: ListKind<'_>, item_ty: Ty<'_>, items: &[Value]) -> Vec<PathElement> {
    items
        .iter()
        .enumerate()
        .map(|(i, it)| item_element(kind, item_ty, it, i).unwrap_or(PathElement::Index(i)))
        .collect()
}

/// Every path `v` sets: scalars, atomic lists and maps, items of associative lists (and
/// what they set), keys of maps, and empty or null fields.
pub(crate) fn to_field_set(v: &Value, ty: Ty<'_>) -> FieldSet {
    let mut out = FieldSet::default();
    walk_set(v, ty, &mut Vec::new(), &mut out);
    out
}

fn walk_set(v: &Value, ty: Ty<'_>, path: &mut Path, out: &mut FieldSet) {
    match v {
        Value::Object(map) => {
            if ty.atomic_map() {
                out.insert(path);
                return;
            }
            for (k, child) in map {
                let f = ty.field(k);
                if matches!(f.ty, Ty::Ignored) {
                    continue;
                }
                path.push(PathElement::Field(k.clone()));
                walk_set(child, f.ty, path, out);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !f.named {
                    out.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let (kind, item_ty) = ty.list();
            if matches!(kind, ListKind::Atomic) {
                out.insert(path);
                return;
            }
            let pes = elements(kind, item_ty, items);
            let mut seen: BTreeMap<&PathElement, usize> = BTreeMap::new();
            for pe in &pes {
                *seen.entry(pe).or_default() += 1;
            }
            for (pe, item) in pes.iter().zip(items) {
                path.push(pe.clone());
                if seen.get(pe).copied().unwrap_or(0) < 2 {
                    walk_set(item, item_ty, path, out);
                }
                out.insert(path);
                path.pop();
            }
        }
        _ => out.insert(path),
    }
}

/// What changed from `old` to `new` (either may be absent). A field the zero value of its
/// parent always has (a non-pointer Go struct) counts as an empty map where it is absent.
pub(crate) fn compare(old: Option<&Value>, new: Option<&Value>, ty: Ty<'_>) -> Comparison {
    let mut out = Comparison::default();
    walk_compare(old, new, ty, false, &mut Vec::new(), &mut out);
    out
}

fn leaf(old: Option<&Value>, new: Option<&Value>, path: &Path, out: &mut Comparison) {
    match (old, new) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        (Some(a), Some(b)) if a != b => out.modified.insert(path),
        _ => {}
    }
}

fn walk_compare(
    old: Option<&Value>,
    new: Option<&Value>,
    ty: Ty<'_>,
    present: bool,
    path: &mut Path,
    out: &mut Comparison,
) {
    let (old, new) = match (old, new) {
        (None, None) => return,
        (None, Some(n @ Value::Object(_))) if present => (Some(&*EMPTY), Some(n)),
        (Some(o @ Value::Object(_)), None) if present => (Some(o), Some(&*EMPTY)),
        (None, Some(n @ Value::Array(_))) if present => (Some(&Value::Null), Some(n)),
        (Some(o @ Value::Array(_)), None) if present => (Some(o), Some(&Value::Null)),
        other => other,
    };
    let is = |f: fn(&Value) -> bool| old.is_some_and(f) || new.is_some_and(f);
    let mixed = |f: fn(&Value) -> bool| [old, new].iter().flatten().any(|v| !(f(v) || v.is_null()));
    if is(Value::is_object) && !mixed(Value::is_object) {
        if ty.atomic_map() || (empty_map(old) && empty_map(new)) {
            return leaf(old, new, path, out);
        }
        let none = Map::new();
        let (om, nm) = (
            old.and_then(Value::as_object).unwrap_or(&none),
            new.and_then(Value::as_object).unwrap_or(&none),
        );
        // The fields a Go struct always has exist in the old value only where the struct
        // itself did: the object being written (its zero value stands for a created one) and
        // what the old value holds, not a list item or map that is new.
        let old_exists = old.is_some() || path.is_empty();
        for (k, v) in om {
            let f = ty.field(k);
            if matches!(f.ty, Ty::Ignored) {
                continue;
            }
            path.push(PathElement::Field(k.clone()));
            walk_compare(Some(v), nm.get(k), f.ty, f.present, path, out);
            path.pop();
        }
        for (k, v) in nm.iter().filter(|(k, _)| !om.contains_key(*k)) {
            let f = ty.field(k);
            if matches!(f.ty, Ty::Ignored) {
                continue;
            }
            path.push(PathElement::Field(k.clone()));
            walk_compare(None, Some(v), f.ty, f.present && old_exists, path, out);
            path.pop();
        }
    } else if is(Value::is_array) && !mixed(Value::is_array) {
        let (kind, item_ty) = ty.list();
        if matches!(kind, ListKind::Atomic) || (empty_list(old) && empty_list(new)) {
            return leaf(old, new, path, out);
        }
        compare_items(old, new, kind, item_ty, path, out);
    } else {
        return leaf(old, new, path, out);
    }
    match (old, new) {
        (None, _) => out.added.insert(path),
        (_, None) => out.removed.insert(path),
        _ => {}
    }
}

fn compare_items<'v>(
    old: Option<&'v Value>,
    new: Option<&'v Value>,
    kind: ListKind<'_>,
    item_ty: Ty<'_>,
    path: &mut Path,
    out: &mut Comparison,
) {
    let (ol, nl): (&[Value], &[Value]) = (
        old.and_then(Value::as_array).map_or(&[], Vec::as_slice),
        new.and_then(Value::as_array).map_or(&[], Vec::as_slice),
    );
    let group = |list: &'v [Value]| {
        let mut by: BTreeMap<PathElement, Vec<&'v Value>> = BTreeMap::new();
        let mut order = Vec::new();
        for (pe, it) in elements(kind, item_ty, list).into_iter().zip(list) {
            if !by.contains_key(&pe) {
                order.push(pe.clone());
            }
            by.entry(pe).or_default().push(it);
        }
        (by, order)
    };
    let (ob, mut order) = group(ol);
    let (nb, norder) = group(nl);
    order.extend(norder.into_iter().filter(|pe| !ob.contains_key(pe)));
    let empty = Vec::new();
    for pe in order {
        let l = ob.get(&pe).unwrap_or(&empty);
        let r = nb.get(&pe).unwrap_or(&empty);
        path.push(pe);
        match (l.len(), r.len()) {
            (0..=1, 0..=1) => walk_compare(
                l.first().copied(),
                r.first().copied(),
                item_ty,
                false,
                path,
                out,
            ),
            (2.., 2..) => {
                if l != r {
                    out.modified.insert(path);
                }
            }
            (2.., _) => {
                if let Some(first) = r.first() {
                    walk_compare(None, Some(*first), item_ty, false, path, out);
                }
                out.removed.insert(path);
            }
            (_, _) => {
                if let Some(first) = l.first() {
                    walk_compare(Some(*first), None, item_ty, false, path, out);
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
}

/// Checks an applied configuration against its type: fields the schema does not declare,
/// list items that cannot be named by their keys, duplicate items. The message is
/// structured-merge-diff's (`.spec.x: field not declared in schema`).
pub(crate) fn validate(v: &Value, ty: Ty<'_>) -> Result<(), String> {
    let mut errs = Vec::new();
    walk_validate(v, ty, &mut Vec::new(), &mut errs);
    match errs.as_slice() {
        [] => Ok(()),
        [one] => Err(one.clone()),
        many => Err(format!("errors:\n  {}", many.join("\n  "))),
    }
}

fn walk_validate(v: &Value, ty: Ty<'_>, path: &mut Path, errs: &mut Vec<String>) {
    let here = |path: &Path, msg: String| {
        if path.is_empty() {
            msg
        } else {
            format!("{}: {msg}", path_string(path))
        }
    };
    if let Some(kind) = ty.scalar() {
        if let Some(msg) = scalar_mismatch(kind, v) {
            errs.push(here(path, msg));
        }
        return;
    }
    match v {
        Value::Object(map) => {
            if ty.atomic_map() {
                return;
            }
            for (k, child) in map {
                let f = ty.field(k);
                path.push(PathElement::Field(k.clone()));
                if !f.declared {
                    errs.push(here(path, "field not declared in schema".into()));
                    path.pop();
                    return;
                }
                walk_validate(child, f.ty, path, errs);
                path.pop();
            }
        }
        Value::Array(items) => {
            let (kind, item_ty) = ty.list();
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let pe = match item_element(kind, item_ty, item, i) {
                    Ok(pe) => pe,
                    Err(e) => {
                        errs.push(here(path, format!("element {i}: {e}")));
                        return;
                    }
                };
                if !seen.insert(pe.clone()) {
                    errs.push(here(path, format!("duplicate entries for key {pe}")));
                }
                path.push(pe);
                walk_validate(item, item_ty, path, errs);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Why `v` is not a scalar of `kind` (null is any), in structured-merge-diff's words: it
/// prints the unstructured value with Go's `%#v`, `%T` or `%v`.
fn scalar_mismatch(kind: ScalarKind, v: &Value) -> Option<String> {
    match (kind, v) {
        (_, Value::Null)
        | (ScalarKind::String, Value::String(_))
        | (ScalarKind::Numeric, Value::Number(_))
        | (ScalarKind::Boolean, Value::Bool(_)) => None,
        (ScalarKind::String, _) => Some(format!(
            "expected string, got &value.valueUnstructured{{Value:{}}}",
            go_sharp_format(v)
        )),
        (ScalarKind::Numeric, _) => Some(format!(
            "expected numeric (int or float), got {}",
            go_type(v)
        )),
        (ScalarKind::Boolean, _) => Some(format!("expected boolean, got &{{{}}}", go_format(v))),
    }
}
