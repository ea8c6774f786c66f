//! The replicaset controller: each ReplicaSet keeps `spec.replicas` active pods (neither
//! finished nor being deleted) made from its template, named `<replicaset>-<5 letters>` and
//! owned by it; missing ones (deleted, or a scale-up) are created, extra ones deleted (the
//! least advanced first: unscheduled, then pending, then not ready, the newest first), and
//! the status counts its pods. Pods are matched to their ReplicaSet by controller reference.

use std::cmp::Reverse;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::deployments::MANAGER;
use super::objects::{
    PODS, REPLICASETS, active, by_controller, condition_true, controller_ref, create, delete, list,
    terminal, text, write_status,
};
use crate::machinery::meta;
use crate::store::State;

/// Most pods created for one ReplicaSet in one pass (upstream's `burstReplicas`).
pub(super) const BURST: usize = 500;

/// One pass over every ReplicaSet; true if anything was written.
pub(super) fn reconcile(st: &mut State) -> bool {
    let rss = list(st, REPLICASETS);
    let pods = list(st, PODS);
    let pods_of = by_controller(&pods);
    let mut changed = false;
    for rs in &rss {
        let mine: Vec<&Arc<Value>> = pods_of
            .get(meta::uid(rs))
            .map(|ps| ps.iter().copied().filter(|p| active(p)).collect())
            .unwrap_or_default();
        let want = rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)
            .max(0) as usize;
        if !meta::is_deleting(rs) && mine.len() != want {
            changed |= if mine.len() < want {
                let upto = want.min(mine.len() + BURST);
                (mine.len()..upto).fold(false, |c, _| create_pod(st, rs) || c)
            } else {
                delete_extra(st, mine, want)
            };
            continue;
        }
        let terminating = pods_of.get(meta::uid(rs)).map_or(0, |ps| {
            ps.iter()
                .filter(|p| meta::is_deleting(p) && !terminal(p))
                .count()
        });
        changed |= write_status(st, REPLICASETS, MANAGER, rs, status(rs, &mine, terminating));
    }
    changed
}

/// Creates one pod from the ReplicaSet's template.
fn create_pod(st: &mut State, rs: &Value) -> bool {
    let pod = pod_from_template(
        rs,
        "apps/v1",
        "ReplicaSet",
        &format!("{}-", meta::name(rs)),
        &[],
    );
    create(st, PODS, MANAGER, pod).is_some()
}

/// A pod of `owner`'s `spec.template`, owned by it, named from `generate_name`, with
/// `finalizers` added to the template's.
pub(super) fn pod_from_template(
    owner: &Value,
    api_version: &str,
    kind: &str,
    generate_name: &str,
    finalizers: &[&str],
) -> Value {
    let tpl_md = owner
        .pointer("/spec/template/metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut md = Map::new();
    md.insert("generateName".into(), json!(generate_name));
    md.insert("namespace".into(), json!(meta::namespace(owner)));
    for k in ["labels", "annotations"] {
        if let Some(v) = tpl_md.get(k) {
            md.insert(k.into(), v.clone());
        }
    }
    let mut fins: Vec<Value> = tpl_md
        .get("finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    fins.extend(finalizers.iter().map(|f| json!(f)));
    if !fins.is_empty() {
        md.insert("finalizers".into(), Value::Array(fins));
    }
    md.insert(
        "ownerReferences".into(),
        json!([controller_ref(owner, api_version, kind)]),
    );
    let spec = owner
        .pointer("/spec/template/spec")
        .cloned()
        .unwrap_or(json!({}));
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
}

/// Deletes all but `keep` of `pods`, the least advanced first.
fn delete_extra(st: &mut State, mut pods: Vec<&Arc<Value>>, keep: usize) -> bool {
    let rank = |p: &Value| {
        let assigned = !text(p, "/spec/nodeName").is_empty();
        let phase = match text(p, "/status/phase") {
            "Pending" => 0,
            "Running" => 2,
            _ => 1,
        };
        let created = text(p, "/metadata/creationTimestamp").to_string();
        (
            assigned,
            phase,
            condition_true(p, "Ready"),
            Reverse(created),
        )
    };
    pods.sort_by_key(|p| rank(p));
    let extra = pods.len().saturating_sub(keep);
    let mut changed = false;
    for p in pods.into_iter().take(extra) {
        changed |= delete(st, PODS, p);
    }
    changed
}

/// The status of a ReplicaSet with these active pods and `terminating` pods being deleted
/// (counted as upstream counts them with `DeploymentReplicaSetTerminatingReplicas` on, the
/// default since 1.35).
fn status(rs: &Value, pods: &[&Arc<Value>], terminating: usize) -> Value {
    let tpl_labels = rs
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let fully_labeled = pods
        .iter()
        .filter(|p| {
            let labels = meta::field(p, "labels").and_then(Value::as_object);
            tpl_labels
                .into_iter()
                .flatten()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        })
        .count();
    let ready = pods.iter().filter(|p| condition_true(p, "Ready")).count();
    let mut m = Map::new();
    m.insert("replicas".into(), json!(pods.len()));
    for (k, n) in [
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", ready),
    ] {
        if n > 0 {
            m.insert(k.into(), json!(n));
        }
    }
    m.insert("terminatingReplicas".into(), json!(terminating));
    m.insert("observedGeneration".into(), json!(meta::generation(rs)));
    if let Some(c) = rs.pointer("/status/conditions") {
        m.insert("conditions".into(), c.clone());
    }
    Value::Object(m)
}
