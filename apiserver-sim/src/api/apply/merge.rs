//! Merging an applied configuration into the live object by the type's rules
//! ([`merge`]), removing sets of paths from a value ([`remove_items`]), and the set
//! widening the pruning of un-applied fields relies on ([`ensure_named_fields`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::fieldpath::PathElement;
use super::schema::{ListKind, Ty};
use super::set::FieldSet;
use super::typed::elements;

/// `config` merged into `live`: maps merge key by key, associative lists item by item
/// (keeping the live order, with the applied items in their order), everything else
/// (scalars, atomic lists and maps) is replaced by the applied value. A field applied as
/// `null` is left out of the result.
pub(crate) fn merge(live: Option<&Value>, config: Option<&Value>, ty: Ty<'_>) -> Option<Value> {
    let (l, r) = match (live, config) {
        (None, None) => return None,
        (Some(l), None) => return Some(l.clone()),
        (None, Some(r)) => return without_nulls(r),
        (Some(l), Some(r)) => (l, r),
    };
    match (l, r) {
        (Value::Object(lm), Value::Object(rm)) => {
            if ty.atomic_map() || (lm.is_empty() && rm.is_empty()) {
                return Some(r.clone());
            }
            let mut out = Map::new();
            for (k, lv) in lm {
                let f = ty.field(k);
                if let Some(v) = merge(Some(lv), rm.get(k), f.ty) {
                    out.insert(k.clone(), v);
                }
            }
            for (k, rv) in rm.iter().filter(|(k, _)| !lm.contains_key(*k)) {
                if let Some(v) = merge(None, Some(rv), ty.field(k).ty) {
                    out.insert(k.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        (Value::Array(la), Value::Array(ra)) => {
            let (kind, item_ty) = ty.list();
            if matches!(kind, ListKind::Atomic) || (la.is_empty() && ra.is_empty()) {
                return Some(r.clone());
            }
            let out = merge_items(la, ra, kind, item_ty);
            (!out.is_empty()).then_some(Value::Array(out))
        }
        // A null map or associative list merges nothing into the live one.
        (Value::Object(_), Value::Null) if !ty.atomic_map() => Some(l.clone()),
        (Value::Array(_), Value::Null) if !matches!(ty.list().0, ListKind::Atomic) => {
            Some(l.clone())
        }
        (_, Value::Null) => None,
        _ => Some(r.clone()),
    }
}

fn without_nulls(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => Some(Value::Object(
            m.iter()
                .filter_map(|(k, v)| without_nulls(v).map(|v| (k.clone(), v)))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

/// Merges two associative lists: live items keep their place, applied items follow the
/// applied order, shared items merged (structured-merge-diff's interleaving).
fn merge_items(la: &[Value], ra: &[Value], kind: ListKind<'_>, item_ty: Ty<'_>) -> Vec<Value> {
    let lpes = elements(kind, item_ty, la);
    let rpes = elements(kind, item_ty, ra);
    // A live key that appears more than once has no single item to merge with.
    let mut observed_l: BTreeMap<&PathElement, Option<&Value>> = BTreeMap::new();
    for (pe, it) in lpes.iter().zip(la) {
        observed_l
            .entry(pe)
            .and_modify(|v| *v = None)
            .or_insert(Some(it));
    }
    let mut observed_r: BTreeMap<&PathElement, &Value> = BTreeMap::new();
    let mut rorder = Vec::new();
    for (pe, it) in rpes.iter().zip(ra) {
        if !observed_r.contains_key(pe) {
            observed_r.insert(pe, it);
            rorder.push(pe);
        }
    }
    let mut shared: VecDeque<&PathElement> = rorder
        .iter()
        .copied()
        .filter(|pe| observed_l.contains_key(pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_r: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::new();
    let (ll, rl) = (lpes.len(), rorder.len());
    let (mut li, mut ri) = (0, 0);
    let lget = |pe: &PathElement| observed_l.get(pe).copied().flatten();
    while li < ll || ri < rl {
        if li < ll && ri < rl {
            let pe = &lpes[li];
            if pe == rorder[ri] {
                merged_r.insert(pe);
                out.extend(merge(lget(pe), observed_r.get(pe).copied(), item_ty));
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_r.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < ll {
            let pe = &lpes[li];
            if !observed_r.contains_key(pe) {
                out.extend(merge(Some(&la[li]), None, item_ty));
                li += 1;
                continue;
            } else if merged_r.contains(pe) {
                li += 1;
            }
        }
        if ri < rl {
            let pe = rorder[ri];
            merged_r.insert(pe);
            out.extend(merge(lget(pe), observed_r.get(pe).copied(), item_ty));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    out
}

/// `v` without the paths of `set` (a member removes its whole subtree). A map or list left
/// empty by the removal is removed too; atomic values are kept or removed whole.
pub(crate) fn remove_items(v: &Value, set: &FieldSet, ty: Ty<'_>) -> Option<Value> {
    match v {
        Value::Object(map) if !map.is_empty() && !ty.atomic_map() => {
            let mut out = Map::new();
            for (k, child) in map {
                let pe = PathElement::Field(k.clone());
                if set.has_member(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) => {
                        if let Some(kept) = remove_items(child, sub, ty.field(k).ty) {
                            out.insert(k.clone(), kept);
                        }
                    }
                    None => {
                        out.insert(k.clone(), child.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) if !items.is_empty() => {
            let (kind, item_ty) = ty.list();
            if matches!(kind, ListKind::Atomic) {
                return Some(v.clone());
            }
            let mut out = Vec::new();
            for (pe, item) in elements(kind, item_ty, items).iter().zip(items) {
                if set.has_member(pe) {
                    continue;
                }
                match set.child(pe) {
                    Some(sub) => out.extend(remove_items(item, sub, item_ty)),
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}

/// The set with every declared struct field that has paths below it made a member too, so
/// that removing the set removes such a field when it is left empty.
pub(crate) fn ensure_named_fields(set: &FieldSet, ty: Ty<'_>) -> FieldSet {
    let mut out = set.clone();
    for (pe, sub) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => {
                let f = ty.field(name);
                if f.named {
                    out.insert_member(pe.clone());
                }
                f.ty
            }
            _ => ty.list().1,
        };
        out.set_child(pe.clone(), ensure_named_fields(sub, child_ty));
    }
    out
}
