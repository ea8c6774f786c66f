//! Unit tests of the apply algorithms on plain values (the HTTP behaviour is tested in
//! `tests/it/apply*.rs` and `tests/it/managed_fields.rs`).

use serde_json::{Value, json};

use super::fieldpath::{PathElement, path_string};
use super::managed_fields::{ManagerId, Managers, Operation, Owned};
use super::merge::{ensure_named_fields, merge, remove_items};
use super::merge_rules::{self, B};
use super::schema::{ListKind, Ty, item_element};
use super::set::FieldSet;
use super::typed::{compare, to_field_set, validate};
use super::updater::{Scope, Write, apply, update};

fn deployment() -> Ty<'static> {
    Ty::Builtin(merge_rules::root("apps", "Deployment"))
}

fn paths(set: &FieldSet) -> Vec<String> {
    set.paths().iter().map(|p| path_string(p)).collect()
}

fn containers(names: &[&str]) -> Value {
    let items: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    json!({"spec": {"template": {"spec": {"containers": items}}}})
}

#[test]
fn associative_lists_keep_live_order_and_follow_the_applied_order() {
    let out = merge(
        Some(&containers(&["a", "b", "c"])),
        Some(&containers(&["c", "d", "b"])),
        deployment(),
    )
    .expect("merged");
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["a", "c", "d", "b"]);
}

#[test]
fn field_sets_follow_list_and_map_types() {
    let obj = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["f"]},
        "spec": {"selector": {"matchLabels": {"a": "1"}}, "paused": null, "strategy": {},
            "template": {"spec": {"tolerations": [{"key": "k"}],
                "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}}});
    assert_eq!(
        paths(&to_field_set(&obj, deployment())),
        [
            ".metadata.finalizers[=\"f\"]",
            ".metadata.labels.a",
            ".spec.paused",
            ".spec.selector",
            ".spec.strategy",
            ".spec.template.spec.tolerations",
            ".spec.template.spec.containers[name=\"c\"]",
            ".spec.template.spec.containers[name=\"c\"].name",
            ".spec.template.spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"]",
            ".spec.template.spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
        ]
    );
}

#[test]
fn comparisons_count_zero_value_structs_as_present() {
    let created = json!({"spec": {"template": {"metadata": {"labels": {"a": "1"}}}}});
    let cmp = compare(None, Some(&created), deployment());
    assert_eq!(
        paths(&cmp.added),
        [
            ".spec.template.metadata.labels",
            ".spec.template.metadata.labels.a"
        ]
    );
    let cm = Ty::Builtin(merge_rules::root("", "ConfigMap"));
    let cmp = compare(
        Some(&json!({"data": {"a": "1", "b": "1"}})),
        Some(&json!({"data": {"a": "2", "c": "1"}})),
        cm,
    );
    assert_eq!(paths(&cmp.modified), [".data.a"]);
    assert_eq!(paths(&cmp.added), [".data.c"]);
    assert_eq!(paths(&cmp.removed), [".data.b"]);
}

#[test]
fn removal_takes_named_fields_left_empty() {
    let ty = Ty::Builtin(merge_rules::root("", "ConfigMap"));
    let obj = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "data": {"k": "v"}});
    let mut set = FieldSet::default();
    set.insert(&[
        PathElement::field("metadata"),
        PathElement::field("labels"),
        PathElement::field("a"),
    ]);
    let named = ensure_named_fields(&set, ty);
    assert_eq!(
        paths(&named),
        [".metadata", ".metadata.labels", ".metadata.labels.a"]
    );
    let mut labels_only = FieldSet::default();
    labels_only.insert(&[PathElement::field("metadata"), PathElement::field("labels")]);
    assert_eq!(
        remove_items(&obj, &labels_only, ty),
        Some(json!({"metadata": {"name": "x"}, "data": {"k": "v"}}))
    );
}

#[test]
fn list_items_need_their_keys() {
    let keys = ListKind::Keys(&["name"]);
    let item = Ty::Builtin(B::Plain);
    assert_eq!(
        item_element(keys, item, &json!({"image": "x"}), 0),
        Err("associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)".into())
    );
    assert!(item_element(keys, item, &json!("x"), 0).is_err());
    assert!(item_element(ListKind::Set, item, &json!({}), 0).is_err());
    assert_eq!(
        validate(&containers(&["a", "a"]), deployment()),
        Err(".spec.template.spec.containers: duplicate entries for key [name=\"a\"]".into())
    );
}

fn write(manager: &str, operation: Operation) -> Write<'static> {
    Write {
        ty: Ty::Builtin(merge_rules::root("", "ConfigMap")),
        scope: Scope::All,
        id: ManagerId::new(manager, operation, "v1", ""),
        api_version: "v1",
        now: "2024-01-01T00:00:00Z",
    }
}

#[test]
fn updates_take_changed_fields_and_applies_conflict_on_them() {
    let live = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
    let managers = update(
        &write("creator", Operation::Update),
        None,
        &live,
        Managers::new(),
    );
    let creator = ManagerId::new("creator", Operation::Update, "v1", "");
    assert_eq!(
        managers.get(&creator).map(|o| o.set.to_fields_v1()),
        Some(json!({"f:data": {".": {}, "f:a": {}}}))
    );
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}});
    let applier = write("applier", Operation::Apply);
    let conflicts = apply(&applier, &live, &config, managers.clone(), false).expect_err("conflict");
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].0, creator);
    let (obj, after) = apply(&applier, &live, &config, managers, true).expect("forced");
    assert_eq!(obj["data"]["a"], "2");
    let owned: Vec<(&ManagerId, &Owned)> = after.iter().collect();
    assert_eq!(owned.len(), 2, "the creator keeps .data itself");
    assert_eq!(
        after.get(&creator).map(|o| o.set.to_fields_v1()),
        Some(json!({"f:data": {}}))
    );
}

#[test]
fn the_oldest_of_more_than_ten_updaters_merge_into_ancient_changes() {
    let mut managers = Managers::new();
    let mut live = json!({"data": {}});
    for i in 0..11 {
        let mut new = live.clone();
        new["data"][format!("k{i:02}")] = json!("v");
        let now = format!("2024-01-01T00:00:{i:02}Z");
        let w = Write {
            now: &now,
            ..write(&format!("m{i:02}"), Operation::Update)
        };
        managers = update(&w, Some(&live), &new, managers);
        live = new;
    }
    assert_eq!(managers.len(), 10);
    let bucket = ManagerId::new("ancient-changes", Operation::Update, "v1", "");
    assert_eq!(
        managers.get(&bucket).map(|o| o.set.to_fields_v1()),
        Some(json!({"f:data": {"f:k00": {}, "f:k01": {}}}))
    );
    assert!(!managers.contains_key(&ManagerId::new("m00", Operation::Update, "v1", "")));
    assert!(managers.contains_key(&ManagerId::new("m02", Operation::Update, "v1", "")));
}
