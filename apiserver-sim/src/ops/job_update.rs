//! What an update of a Job may change in its pod template, as kube-apiserver v1.36 decides
//! (the batch API's `validatePodTemplateUpdate`, with `MutableSchedulingDirectivesForSuspendedJobs`
//! and `MutablePodResourcesForSuspendedJobs` on, their default): nothing while the Job is not
//! suspended; in a suspended Job that has not started (or carries `Suspended=True`) and has no
//! active pods, the scheduling directives (node selector, node affinity, tolerations,
//! scheduling gates, the template's labels and annotations) and the containers' resources. A
//! refusal prints the new template (or its pod spec) as Go prints the internal struct.

use serde_json::{Value, json};

use crate::machinery::go_struct;
use crate::machinery::status::Cause;

/// The causes of refusing the update of a Job from `old` to `new` for its template.
pub(super) fn template(old: &Value, new: &Value) -> Vec<Cause> {
    let suspended = old.pointer("/spec/suspend") == Some(&json!(true));
    let not_started = old.pointer("/status/startTime").is_none_or(Value::is_null);
    let suspended_condition = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Suspended" && c["status"] == "True")
        });
    let active = old
        .pointer("/status/active")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mutable = suspended && (not_started || suspended_condition) && active == 0;
    let new_template = new
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let mut old_template = old
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if mutable {
        take_scheduling_directives(&mut old_template, &new_template);
    }
    if !mutable {
        return immutable(
            "spec.template",
            "PodTemplateSpec",
            &new_template,
            &old_template,
        );
    }
    let new_spec = new_template.get("spec").cloned().unwrap_or(Value::Null);
    let mut old_spec = old_template.get("spec").cloned().unwrap_or(Value::Null);
    for list in ["containers", "initContainers"] {
        take_resources(&mut old_spec, &new_spec, list);
    }
    immutable("spec.template.spec", "PodSpec", &new_spec, &old_spec)
}

/// `field is immutable` with the new value printed, unless both are semantically equal.
fn immutable(field: &str, go_type: &str, new: &Value, old: &Value) -> Vec<Cause> {
    if go_struct::semantically_equal(new, old) {
        return Vec::new();
    }
    vec![Cause {
        reason: "FieldValueInvalid".into(),
        message: format!(
            "Invalid value: {}: field is immutable",
            go_struct::dump(go_type, new)
        ),
        field: field.into(),
    }]
}

/// Sets (or removes) `key` of `to` as it is in `from`.
fn copy_key(to: &mut Value, from: &Value, key: &str) {
    let Some(map) = to.as_object_mut() else {
        return;
    };
    match from.get(key) {
        Some(v) => map.insert(key.to_string(), v.clone()),
        None => map.remove(key),
    };
}

/// The directives a suspended Job's template may change, taken from the new template.
fn take_scheduling_directives(old: &mut Value, new: &Value) {
    let null = Value::Null;
    let new_meta = new.get("metadata").unwrap_or(&null);
    if let Some(meta) = old.get_mut("metadata") {
        copy_key(meta, new_meta, "labels");
        copy_key(meta, new_meta, "annotations");
    }
    let new_spec = new.get("spec").unwrap_or(&null);
    let Some(spec) = old.get_mut("spec") else {
        return;
    };
    for key in ["nodeSelector", "tolerations", "schedulingGates"] {
        copy_key(spec, new_spec, key);
    }
    let new_affinity = new_spec.get("affinity").filter(|a| !a.is_null());
    let old_has_affinity = spec.get("affinity").is_some_and(|a| !a.is_null());
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    match (new_affinity, old_has_affinity) {
        (None, true) => {
            let emptied = spec.get_mut("affinity").and_then(Value::as_object_mut);
            if let Some(affinity) = emptied {
                affinity.remove("nodeAffinity");
                if affinity.is_empty() {
                    spec.remove("affinity");
                }
            }
        }
        (Some(affinity), false) => {
            let mut only_node = json!({});
            copy_key(&mut only_node, affinity, "nodeAffinity");
            spec.insert("affinity".into(), only_node);
        }
        (Some(affinity), true) => {
            if let Some(old_affinity) = spec.get_mut("affinity") {
                copy_key(old_affinity, affinity, "nodeAffinity");
            }
        }
        (None, false) => {}
    }
}

/// The containers' resources of a list, taken from the new spec where the lists have the same
/// length and the container at the same place has the same name.
fn take_resources(old: &mut Value, new: &Value, list: &str) {
    let new_items = new.get(list).and_then(Value::as_array);
    let old_items = old.get_mut(list).and_then(Value::as_array_mut);
    let (Some(new_items), Some(old_items)) = (new_items, old_items) else {
        return;
    };
    if new_items.len() != old_items.len() {
        return;
    }
    for (o, n) in old_items.iter_mut().zip(new_items) {
        if o.get("name") == n.get("name") {
            copy_key(o, n, "resources");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(suspend: bool, image: &str, cpu: &str, selector: &str) -> Value {
        json!({"spec": {"suspend": suspend, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"nodeSelector": {"n": selector}, "restartPolicy": "Never",
                "containers": [{"name": "c", "image": image,
                    "resources": {"requests": {"cpu": cpu}}}]}}}})
    }

    #[test]
    fn a_suspended_job_changes_only_resources_and_scheduling() {
        let old = job(true, "i:1", "1", "x");
        assert!(template(&old, &job(true, "i:1", "2", "y")).is_empty());
        let refused = template(&old, &job(true, "i:2", "1", "x"));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].field, "spec.template.spec");
        assert!(
            refused[0]
                .message
                .starts_with(r#"Invalid value: {"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"i:2","#),
            "{}",
            refused[0].message
        );
        assert!(refused[0].message.ends_with(": field is immutable"));
    }

    #[test]
    fn a_running_job_changes_nothing_in_its_template() {
        let old = job(false, "i:1", "1", "x");
        assert!(template(&old, &job(false, "i:1", "1", "x")).is_empty());
        let refused = template(&old, &job(false, "i:1", "2", "x"));
        assert_eq!(refused[0].field, "spec.template");
        assert!(
            refused[0]
                .message
                .starts_with(r#"Invalid value: {"labels":{"a":"b"},"Spec":{"#)
        );
        let mut started = job(true, "i:1", "1", "x");
        started["status"] = json!({"startTime": "2026-12-02T10:00:00Z", "active": 1});
        assert_eq!(template(&started, &job(true, "i:1", "1", "y")).len(), 1);
    }
}
