//! The disruption controller: keeps each PodDisruptionBudget's status, which evictions
//! spend, as upstream's computes it. Its pods are those of its namespace its (non-empty)
//! selector matches; `expectedPods` is the replicas of their controllers (ReplicaSets,
//! StatefulSets, ReplicationControllers; the pods themselves with `minAvailable` as a
//! number, or when a pod has no such controller); `desiredHealthy` is `minAvailable` (a
//! number, or a percentage of the expected pods rounded up) or the expected pods less
//! `maxUnavailable`; `currentHealthy` counts the ready pods not being deleted and not just
//! evicted (`disruptedPods`, kept two minutes at most); `disruptionsAllowed` is what is left
//! above the desired count.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::deployments::MANAGER;
use super::objects::{PODS, condition_true, list, write_status};
use crate::machinery::meta;
use crate::machinery::resource_info::GroupResourceRef;
use crate::machinery::selector::LabelSelector;
use crate::store::State;

/// policy/v1 poddisruptionbudgets.
pub(super) const PDBS: GroupResourceRef<'static> =
    GroupResourceRef::new("policy", "poddisruptionbudgets");

/// How long an evicted pod counts as disrupted before it must be gone (upstream's
/// `DeletionTimeout`).
const DELETION_TIMEOUT_SECS: i64 = 120;

/// One pass over every budget; true if a status was written.
pub(super) fn reconcile(st: &mut State) -> bool {
    let budgets = list(st, PDBS);
    if budgets.is_empty() {
        return false;
    }
    let pods = list(st, PODS);
    let now = jiff::Timestamp::now();
    let mut changed = false;
    for pdb in &budgets {
        let status = status_of(st, pdb, &pods, now);
        changed |= write_status(st, PDBS, MANAGER, pdb, status);
    }
    changed
}

/// An int-or-string `value` against `total`: the number, or the percentage of `total`
/// rounded up.
fn scaled(value: &Value, total: i64) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let pct: i64 = s.strip_suffix('%')?.parse().ok()?;
            Some((pct * total + 99) / 100)
        }
        _ => None,
    }
}

/// The replicas of the controllers of `pods`, or `None` when a pod has none it can name.
fn expected_from_controllers(st: &State, pods: &[&Arc<Value>]) -> Option<i64> {
    let mut controllers: BTreeMap<(String, String, String), i64> = BTreeMap::new();
    for pod in pods {
        let refs = meta::field(pod, "ownerReferences").and_then(Value::as_array)?;
        let owner = refs.iter().find(|r| r["controller"] == true)?;
        let (group, resource) = match owner["kind"].as_str()? {
            "ReplicaSet" => ("apps", "replicasets"),
            "StatefulSet" => ("apps", "statefulsets"),
            "ReplicationController" => ("", "replicationcontrollers"),
            _ => return None,
        };
        let name = owner["name"].as_str()?.to_string();
        let ns = meta::namespace(pod).to_string();
        let gr = GroupResourceRef { group, resource };
        let obj = st.get(&gr, &(ns.clone(), name.clone()))?;
        let replicas = obj
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        controllers.insert((resource.to_string(), ns, name), replicas);
    }
    Some(controllers.values().sum())
}

fn status_of(st: &State, pdb: &Value, pods: &[Arc<Value>], now: jiff::Timestamp) -> Value {
    let ns = meta::namespace(pdb);
    let selector = pdb
        .pointer("/spec/selector")
        .and_then(LabelSelector::from_object)
        .filter(|s| !s.is_empty());
    let members: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| meta::namespace(p) == ns)
        .filter(|p| selector.as_ref().is_some_and(|s| s.matches(p)))
        .collect();
    let count = members.len() as i64;
    let spec = pdb.get("spec").cloned().unwrap_or_default();
    let (expected, desired) = match (spec.get("minAvailable"), spec.get("maxUnavailable")) {
        (Some(Value::Number(n)), _) => (count, n.as_i64().unwrap_or(0)),
        (Some(min), _) => {
            let expected = expected_from_controllers(st, &members).unwrap_or(count);
            (expected, scaled(min, expected).unwrap_or(0))
        }
        (None, Some(max)) => {
            let expected = expected_from_controllers(st, &members).unwrap_or(count);
            let down = scaled(max, expected).unwrap_or(0);
            (expected, (expected - down).max(0))
        }
        (None, None) => (count, 0),
    };
    // Evictions not yet carried out, dropped once their pod is gone or too old.
    let mut disrupted = Map::new();
    if let Some(old) = pdb
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
    {
        for (name, at) in old {
            let pod = members.iter().find(|p| meta::name(p) == name);
            let fresh = at
                .as_str()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .is_some_and(|t| now.as_second() - t.as_second() < DELETION_TIMEOUT_SECS);
            if pod.is_some_and(|p| !meta::is_deleting(p)) && fresh {
                disrupted.insert(name.clone(), at.clone());
            }
        }
    }
    let healthy = members
        .iter()
        .filter(|p| !meta::is_deleting(p) && condition_true(p, "Ready"))
        .filter(|p| !disrupted.contains_key(meta::name(p)))
        .count() as i64;
    let allowed = (healthy - desired).max(0);
    let generation = meta::generation(pdb);
    let (cond_status, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let previous = pdb
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let since = match previous {
        Some(c) if c["status"] == cond_status => c["lastTransitionTime"].clone(),
        _ => json!(meta::now_rfc3339()),
    };
    let mut status = json!({
        "observedGeneration": generation, "disruptionsAllowed": allowed,
        "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
        "conditions": [{"type": "DisruptionAllowed", "status": cond_status, "reason": reason,
            "message": "", "observedGeneration": generation, "lastTransitionTime": since}],
    });
    if !disrupted.is_empty() {
        status["disruptedPods"] = Value::Object(disrupted);
    }
    status
}
