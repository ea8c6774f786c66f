//! What a Deployment writes on its ReplicaSets besides their size: the revision annotations
//! (`deployment.kubernetes.io/revision`, and `revision-history` when an old ReplicaSet becomes
//! the new one again, as after `kubectl rollout undo`), the replica annotations
//! (`desired-replicas`, `max-replicas`), the Deployment's own annotations copied over (so
//! `kubernetes.io/change-cause` shows in `kubectl rollout history`), and the new ReplicaSet
//! itself, named `<deployment>-<pod-template-hash>`.

use serde_json::{Map, Value, json};

use super::objects::{annotation, controller_ref};
use super::template_hash::{HASH_LABEL, pod_template_hash};
use crate::machinery::meta;
use crate::machinery::pointer::int;

/// The revision a ReplicaSet was (last) the new one of.
pub(super) const REVISION: &str = "deployment.kubernetes.io/revision";
/// Earlier revisions of a ReplicaSet that became the new one again.
const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// The Deployment's replicas when the ReplicaSet was last sized.
pub(super) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// The Deployment's replicas plus its surge then.
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

/// Deployment annotations never copied to its ReplicaSets.
const NOT_COPIED: [&str; 5] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
];

/// The revision of a ReplicaSet (0 when it has none).
pub(super) fn revision(rs: &Value) -> i64 {
    annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// A ReplicaSet's annotations.
fn annotations_of(rs: &Value) -> Map<String, Value> {
    meta::field(rs, "annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Sets the replica annotations.
fn set_replicas(annotations: &mut Map<String, Value>, replicas: i64, surge: i64) {
    annotations.insert(DESIRED_REPLICAS.into(), json!(replicas.to_string()));
    annotations.insert(MAX_REPLICAS.into(), json!((replicas + surge).to_string()));
}

/// `annotations` with the Deployment's own copied in and the replica annotations set.
fn with_deployment_annotations(
    d: &Value,
    annotations: &Map<String, Value>,
    replicas: i64,
    surge: i64,
) -> Map<String, Value> {
    let mut out = annotations.clone();
    if let Some(own) = meta::field(d, "annotations").and_then(Value::as_object) {
        for (k, v) in own {
            if !NOT_COPIED.contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    set_replicas(&mut out, replicas, surge);
    out
}

/// The annotations the new ReplicaSet `rs` should carry, its revision raised to `next` if
/// it is older (the old value kept in the revision history); None when they already match.
pub(super) fn new_rs_annotations(
    d: &Value,
    rs: &Value,
    next: i64,
    replicas: i64,
    surge: i64,
) -> Option<Map<String, Value>> {
    let current = annotations_of(rs);
    let mut want = with_deployment_annotations(d, &current, replicas, surge);
    let old = revision(rs);
    if old < next {
        want.insert(REVISION.into(), json!(next.to_string()));
        if old > 0 {
            let history = match annotation(rs, REVISION_HISTORY) {
                Some(h) if !h.is_empty() => format!("{h},{old}"),
                _ => old.to_string(),
            };
            want.insert(REVISION_HISTORY.into(), json!(history));
        }
    }
    (want != current).then_some(want)
}

/// The annotations of a ReplicaSet being resized, when they change.
pub(super) fn resized_annotations(
    rs: &Value,
    replicas: i64,
    surge: i64,
) -> Option<Map<String, Value>> {
    let current = annotations_of(rs);
    let mut want = current.clone();
    set_replicas(&mut want, replicas, surge);
    (want != current).then_some(want)
}

/// The new ReplicaSet of Deployment `d`: its template with the hash label, the selector
/// narrowed to it, revision `next`, `size` replicas.
pub(super) fn new_replicaset(d: &Value, next: i64, size: i64, replicas: i64, surge: i64) -> Value {
    let collisions = int(d, "/status/collisionCount");
    let template = d.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let hash = pod_template_hash(&template, collisions);
    let mut template = template;
    if let Some(labels) = template
        .as_object_mut()
        .map(|t| t.entry("metadata").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
        .map(|md| md.entry("labels").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        labels.insert(HASH_LABEL.into(), json!(hash));
    }
    let mut selector = d.pointer("/spec/selector").cloned().unwrap_or(json!({}));
    if let Some(s) = selector.as_object_mut() {
        let ml = s.entry("matchLabels").or_insert_with(|| json!({}));
        if let Some(ml) = ml.as_object_mut() {
            ml.insert(HASH_LABEL.into(), json!(hash));
        }
    }
    let mut annotations = with_deployment_annotations(d, &Map::new(), replicas, surge);
    annotations.insert(REVISION.into(), json!(next.to_string()));
    let labels = template
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(json!({}));
    let mut spec = json!({"replicas": size, "selector": selector, "template": template});
    if let Some(mrs) = d.pointer("/spec/minReadySeconds") {
        spec["minReadySeconds"] = mrs.clone();
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{}-{hash}", meta::name(d)),
            "namespace": meta::namespace(d),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [controller_ref(d, "apps/v1", "Deployment")],
        },
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Value {
        json!({"metadata": {"name": "web", "namespace": "default", "uid": "u1",
                "annotations": {"kubernetes.io/change-cause": "v2", REVISION: "1"}},
               "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}})
    }

    #[test]
    fn the_new_replicaset_carries_hash_revision_and_owner() {
        let rs = new_replicaset(&deployment(), 2, 3, 3, 1);
        let name = rs["metadata"]["name"].as_str().unwrap_or_default();
        let hash = rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL]
            .as_str()
            .unwrap_or_default();
        assert_eq!(name, format!("web-{hash}"));
        assert_eq!(rs["spec"]["selector"]["matchLabels"][HASH_LABEL], hash);
        assert_eq!(rs["metadata"]["labels"][HASH_LABEL], hash);
        assert_eq!(rs["metadata"]["annotations"][REVISION], "2");
        assert_eq!(rs["metadata"]["annotations"][MAX_REPLICAS], "4");
        assert_eq!(
            rs["metadata"]["annotations"]["kubernetes.io/change-cause"],
            "v2"
        );
        assert_eq!(rs["metadata"]["ownerReferences"][0]["controller"], true);
    }

    #[test]
    fn an_old_replicaset_made_new_again_keeps_its_revision_history() {
        let d = deployment();
        let rs = json!({"metadata": {"annotations": {REVISION: "1", DESIRED_REPLICAS: "3", MAX_REPLICAS: "4"}}});
        let a = new_rs_annotations(&d, &rs, 3, 3, 1).expect("changed");
        assert_eq!(a[REVISION], "3");
        assert_eq!(a[REVISION_HISTORY], "1");
        let again = json!({"metadata": {"annotations": a}});
        assert_eq!(new_rs_annotations(&d, &again, 3, 3, 1), None, "settled");
    }
}
