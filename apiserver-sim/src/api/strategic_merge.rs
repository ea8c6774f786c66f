//! Strategic merge patch of the built-in types, as upstream's `strategicpatch` merges: lists
//! of objects merged by their merge key (`name` for containers, …), the `$patch` directives
//! (`replace`, `delete`; anything else is refused as upstream refuses it), `$retainKeys`,
//! `$deleteFromPrimitiveList/…`, and the order of merged lists: the patch's items in the
//! patch's order (or `$setElementOrder/…`'s), the server's other items in their order, the
//! two interleaved where the server's order relates them, new items first.

use serde_json::{Map, Value};

use crate::machinery::go_fmt::go_format;

/// The merge key of a list field of the built-in types, by field name.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "secrets" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "ports" => "containerPort",
        "ownerReferences" => "uid",
        "conditions" => "type",
        "hostAliases" => "ip",
        "tolerations" => "key",
        _ => return None,
    })
}

const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            for x in m.values_mut() {
                strip_directives(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

fn stripped(v: &Value) -> Value {
    let mut v = v.clone();
    strip_directives(&mut v);
    v
}

/// Upstream's error for a `$patch` value it does not know.
fn bad_directive(directive: &Value, holder: &Value) -> String {
    format!(
        "unknown patch type: {} in map: {}",
        go_format(directive),
        go_format(holder)
    )
}

/// Strategic merge of `patch` into `target`; `known_keys` enables the built-in merge keys.
/// The error is upstream's message for a directive it refuses.
pub fn strategic_merge(target: &mut Value, patch: &Value, known_keys: bool) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *target = stripped(patch);
        return Ok(());
    };
    match p.get("$patch") {
        None => {}
        Some(Value::String(d)) if d == "replace" => {
            *target = stripped(patch);
            return Ok(());
        }
        Some(Value::String(d)) if d == "delete" => {
            *target = Value::Null;
            return Ok(());
        }
        Some(other) => return Err(bad_directive(other, patch)),
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return Ok(());
    };
    if let Some(Value::Array(keep)) = p.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        t.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in p {
        if let Some(list_field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(cur)), Value::Array(del)) = (t.get_mut(list_field), v) {
                cur.retain(|x| !del.contains(x));
            }
            continue;
        }
        if let Some(list_field) = k.strip_prefix(SET_ELEMENT_ORDER) {
            // An order for a list the patch does not otherwise touch: reorder it.
            if !p.contains_key(list_field)
                && let (Some(mk), Some(Value::Array(order))) =
                    (merge_key(list_field).filter(|_| known_keys), Some(v))
                && let Some(cur) = t.get_mut(list_field)
            {
                merge_list(cur, &[], Some(order), mk, known_keys)?;
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        let key = if known_keys { merge_key(k) } else { None };
        match (v, key, k.as_str()) {
            (Value::Array(items), Some(mk), _) => {
                let order = p
                    .get(&format!("{SET_ELEMENT_ORDER}{k}"))
                    .and_then(Value::as_array);
                let cur = t.entry(k.clone()).or_insert(Value::Array(Vec::new()));
                merge_list(cur, items, order, mk, known_keys)?;
            }
            (Value::Array(items), None, "finalizers") if known_keys => {
                let cur = t.entry(k.clone()).or_insert(Value::Array(Vec::new()));
                if let Value::Array(c) = cur {
                    for it in items {
                        if !c.contains(it) {
                            c.push(it.clone());
                        }
                    }
                } else {
                    *cur = Value::Array(items.clone());
                }
            }
            (Value::Object(_), _, _) => {
                let cur = t.entry(k.clone()).or_insert(Value::Null);
                strategic_merge(cur, v, known_keys)?;
                if cur.is_null() {
                    t.remove(k);
                }
            }
            _ => {
                t.insert(k.clone(), stripped(v));
            }
        }
    }
    Ok(())
}

/// Merges the patch's `items` into the list `cur` by the merge key `mk`, then orders the
/// result as upstream does; `order` is the patch's `$setElementOrder` for this list.
fn merge_list(
    cur: &mut Value,
    items: &[Value],
    order: Option<&Vec<Value>>,
    mk: &str,
    known_keys: bool,
) -> Result<(), String> {
    if !cur.is_array() {
        *cur = Value::Array(Vec::new());
    }
    let Value::Array(list) = cur else {
        return Ok(());
    };
    // The special items first: deletions, a replacement, refusals.
    let mut plain: Vec<&Value> = Vec::new();
    let mut replace = false;
    for item in items {
        match item.get("$patch") {
            None => plain.push(item),
            Some(Value::String(d)) if d == "delete" => {
                if let Some(kv) = item.get(mk) {
                    list.retain(|e| e.get(mk) != Some(kv));
                }
            }
            Some(Value::String(d)) if d == "replace" => replace = true,
            Some(Value::String(d)) if d == "merge" => {
                return Err("merging lists cannot yet be specified in the patch".to_string());
            }
            Some(other) => return Err(bad_directive(other, item)),
        }
    }
    if replace {
        *list = plain.into_iter().map(stripped).collect();
        return Ok(());
    }
    let server_order: Vec<Value> = list.iter().filter_map(|e| e.get(mk).cloned()).collect();
    for item in &plain {
        let Some(kv) = item.get(mk) else {
            list.push(stripped(item));
            continue;
        };
        match list.iter().position(|e| e.get(mk) == Some(kv)) {
            Some(i) => strategic_merge(&mut list[i], item, known_keys)?,
            None => list.push(stripped(item)),
        }
    }
    let patch_order: Vec<Value> = match order {
        Some(order) => order.iter().filter_map(|e| e.get(mk).cloned()).collect(),
        None => plain.iter().filter_map(|e| e.get(mk).cloned()).collect(),
    };
    *list = ordered(std::mem::take(list), &patch_order, &server_order, mk);
    Ok(())
}

/// Upstream's order of a merged list: the items the patch names sorted by the patch's order,
/// the others by the server's; then each server item goes before the next patch item when the
/// server's order has both and puts it first, so items new to the server come first.
fn ordered(
    merged: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    mk: &str,
) -> Vec<Value> {
    let key_of = |v: &Value| v.get(mk).cloned().unwrap_or(Value::Null);
    let position = |order: &[Value], v: &Value| order.iter().position(|k| *k == key_of(v));
    let (mut from_patch, mut server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|v| position(patch_order, v).is_some());
    from_patch.sort_by_key(|v| position(patch_order, v));
    server_only.sort_by_key(|v| position(server_order, v).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(from_patch.len() + server_only.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        from_patch.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => return out,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (position(server_order, l), position(server_order, r)),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(v: &Value) -> Vec<&str> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .collect()
    }

    #[test]
    fn uses_merge_keys_and_directives() {
        let mut t = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
                                     "args": ["1"]},
                           "metadata": {"finalizers": ["f1"]}});
        let p = json!({"spec": {"containers": [{"name": "b", "image": "z"}, {"name": "a", "$patch": "delete"}],
                                "$setElementOrder/containers": [{"name": "b"}], "args": ["2"]},
                       "metadata": {"finalizers": ["f2"]}});
        strategic_merge(&mut t, &p, true).expect("merges");
        assert_eq!(
            t,
            json!({"spec": {"containers": [{"name": "b", "image": "z"}], "args": ["2"]},
                   "metadata": {"finalizers": ["f1", "f2"]}})
        );
    }

    #[test]
    fn orders_merged_lists_as_upstream() {
        // A new item comes before the server's.
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        strategic_merge(&mut t, &json!({"containers": [{"name": "n"}]}), true).expect("merges");
        assert_eq!(names(&t["containers"]), ["n", "a", "b"]);
        // A patched server item keeps its place among the server's.
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        strategic_merge(
            &mut t,
            &json!({"containers": [{"name": "b", "image": "i"}]}),
            true,
        )
        .expect("merges");
        assert_eq!(names(&t["containers"]), ["a", "b"]);
        // $setElementOrder decides the patch's order, also with no items to merge.
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        let p = json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]});
        strategic_merge(&mut t, &p, true).expect("merges");
        assert_eq!(names(&t["containers"]), ["b", "a"]);
    }

    #[test]
    fn refuses_unknown_directives_in_upstreams_words() {
        let mut t = json!({"containers": [{"name": "a"}]});
        let p = json!({"containers": [{"name": "a", "$patch": "explode"}]});
        assert_eq!(
            strategic_merge(&mut t, &p, true).err().as_deref(),
            Some("unknown patch type: explode in map: map[$patch:explode name:a]")
        );
        let p = json!({"spec": {"$patch": 1, "x": [true, null, 1000000, 0.5]}});
        assert_eq!(
            strategic_merge(&mut t, &p, true).err().as_deref(),
            Some("unknown patch type: 1 in map: map[$patch:1 x:[true <nil> 1e+06 0.5]]")
        );
    }
}
