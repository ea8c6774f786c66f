//! Strategic merge patch of the built-in types, as upstream's `strategicpatch` merges: each
//! field by its patch strategy in the kind's schema (`kinds/patch_strategies.rs`): lists of
//! objects merged by their merge key (`name` for containers, `port` for a Service's ports,
//! …), lists of scalars with the `merge` strategy merged as sets (`finalizers`), objects with
//! the `replace` strategy replaced, every other list replaced; the `$patch` directives
//! (`replace`, `delete`; anything else is refused as upstream refuses it), `$retainKeys`,
//! `$deleteFromPrimitiveList/…`, and the order of merged lists: the patch's items in the
//! patch's order (or `$setElementOrder/…`'s), the server's other items in their order, the
//! two interleaved where the server's order relates them, new items first.

use serde_json::{Map, Value};

use crate::kinds::patch_strategies::Shape;
use crate::machinery::go_fmt::go_format;

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

/// Strategic merge of `patch` into `target`, an object of schema `shape` (`None`: no field
/// has a strategy, every list is replaced). The error is upstream's message for a directive
/// it refuses.
pub fn strategic_merge(
    target: &mut Value,
    patch: &Value,
    shape: Option<Shape>,
) -> Result<(), String> {
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
            let (field, items) = field_of(shape, list_field);
            if !p.contains_key(list_field)
                && let (Some(mk), Value::Array(order)) = (field.and_then(|f| f.merge_key()), v)
                && let Some(cur) = t.get_mut(list_field)
            {
                merge_list(cur, &[], Some(order), mk, items)?;
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
        let (field, inner) = field_of(shape, k);
        let merges = field.is_some_and(|f| f.merges());
        match v {
            Value::Array(items) if merges => {
                let cur = t.entry(k.clone()).or_insert(Value::Array(Vec::new()));
                match field.and_then(|f| f.merge_key()) {
                    Some(mk) => {
                        let order = p
                            .get(&format!("{SET_ELEMENT_ORDER}{k}"))
                            .and_then(Value::as_array);
                        merge_list(cur, items, order, mk, inner)?;
                    }
                    None => merge_scalars(cur, items),
                }
            }
            Value::Object(_) if !field.is_some_and(|f| f.replaces()) => {
                let cur = t.entry(k.clone()).or_insert(Value::Null);
                strategic_merge(cur, v, inner)?;
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

/// The field `name` of an object of schema `shape`, and the schema of its value (of its
/// items, for a list).
fn field_of(
    shape: Option<Shape>,
    name: &str,
) -> (
    Option<&'static crate::kinds::patch_strategies::Field>,
    Option<Shape>,
) {
    shape.map_or((None, None), |s| s.field(name))
}

/// A list of scalars with the `merge` strategy: the patch's values the list lacks are added.
fn merge_scalars(cur: &mut Value, items: &[Value]) {
    if let Value::Array(c) = cur {
        for it in items {
            if !c.contains(it) {
                c.push(it.clone());
            }
        }
    } else {
        *cur = Value::Array(items.to_vec());
    }
}

/// Merges the patch's `items` into the list `cur` by the merge key `mk`, then orders the
/// result as upstream does; `order` is the patch's `$setElementOrder` for this list.
fn merge_list(
    cur: &mut Value,
    items: &[Value],
    order: Option<&Vec<Value>>,
    mk: &str,
    item_shape: Option<Shape>,
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
            Some(i) => strategic_merge(&mut list[i], item, item_shape)?,
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
    use crate::kinds::patch_strategies::root;
    use serde_json::json;

    fn pod() -> Option<Shape> {
        root("", "v1", "Pod")
    }

    fn pod_spec() -> Option<Shape> {
        pod().and_then(|s| s.field("spec").1)
    }

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
        strategic_merge(&mut t, &p, pod()).expect("merges");
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
        strategic_merge(&mut t, &json!({"containers": [{"name": "n"}]}), pod_spec())
            .expect("merges");
        assert_eq!(names(&t["containers"]), ["n", "a", "b"]);
        // A patched server item keeps its place among the server's.
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        strategic_merge(
            &mut t,
            &json!({"containers": [{"name": "b", "image": "i"}]}),
            pod_spec(),
        )
        .expect("merges");
        assert_eq!(names(&t["containers"]), ["a", "b"]);
        // $setElementOrder decides the patch's order, also with no items to merge.
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        let p = json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]});
        strategic_merge(&mut t, &p, pod_spec()).expect("merges");
        assert_eq!(names(&t["containers"]), ["b", "a"]);
    }

    #[test]
    fn refuses_unknown_directives_in_upstreams_words() {
        let mut t = json!({"containers": [{"name": "a"}]});
        let p = json!({"containers": [{"name": "a", "$patch": "explode"}]});
        assert_eq!(
            strategic_merge(&mut t, &p, pod_spec()).err().as_deref(),
            Some("unknown patch type: explode in map: map[$patch:explode name:a]")
        );
        let p = json!({"spec": {"$patch": 1, "x": [true, null, 1000000, 0.5]}});
        assert_eq!(
            strategic_merge(&mut t, &p, pod_spec()).err().as_deref(),
            Some("unknown patch type: 1 in map: map[$patch:1 x:[true <nil> 1e+06 0.5]]")
        );
    }

    #[test]
    fn each_list_merges_by_its_own_schemas_key() {
        // A Service's ports by `port` (a container's by `containerPort`).
        let mut t = json!({"spec": {"ports": [{"name": "a", "port": 80, "targetPort": 8080},
                                              {"name": "b", "port": 81}]}});
        let p = json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}});
        strategic_merge(&mut t, &p, root("", "v1", "Service")).expect("merges");
        assert_eq!(
            t["spec"]["ports"],
            json!([{"name": "a", "port": 80, "targetPort": 9090}, {"name": "b", "port": 81}])
        );
        // A webhook configuration's webhooks by `name`: one field changed, the rest kept.
        let hook = json!({"name": "a.example.com", "failurePolicy": "Ignore", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://x"}});
        let mut t = json!({"webhooks": [hook]});
        let p = json!({"$setElementOrder/webhooks": [{"name": "a.example.com"}],
                       "webhooks": [{"name": "a.example.com", "failurePolicy": "Fail"}]});
        let vwc = root(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
        );
        strategic_merge(&mut t, &p, vwc).expect("merges");
        let mut expected = hook.clone();
        expected["failurePolicy"] = json!("Fail");
        assert_eq!(t["webhooks"], json!([expected]));
    }

    #[test]
    fn lists_and_objects_without_a_merge_strategy_are_replaced() {
        // Tolerations have no merge key: the patch's list replaces the object's.
        let mut t = json!({"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b"}]});
        let p = json!({"tolerations": [{"key": "a", "effect": "NoSchedule"}]});
        strategic_merge(&mut t, &p, pod_spec()).expect("merges");
        assert_eq!(
            t["tolerations"],
            json!([{"key": "a", "effect": "NoSchedule"}])
        );
        // A PodDisruptionBudget's selector has the `replace` strategy.
        let mut t = json!({"spec": {"selector": {"matchLabels": {"a": "1"}}}});
        let p = json!({"spec": {"selector": {"matchExpressions": []}}});
        strategic_merge(&mut t, &p, root("policy", "v1", "PodDisruptionBudget")).expect("merges");
        assert_eq!(t["spec"]["selector"], json!({"matchExpressions": []}));
        // Without a schema (custom resources), lists are replaced too.
        let mut t = json!({"containers": [{"name": "a"}]});
        strategic_merge(&mut t, &json!({"containers": [{"name": "b"}]}), None).expect("merges");
        assert_eq!(t["containers"], json!([{"name": "b"}]));
    }
}
