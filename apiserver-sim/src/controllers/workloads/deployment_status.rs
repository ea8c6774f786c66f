//! A Deployment's status, computed from its ReplicaSets as upstream's deployment controller
//! does: replica counts summed over every ReplicaSet (the updated ones from the new
//! ReplicaSet), `unavailableReplicas`, the `Available` condition from the minimum
//! availability and the `Progressing` condition from the rollout's state (paused, in
//! progress, complete). Counts of 0 are left out, as Go's `omitempty` leaves them out, but for
//! `terminatingReplicas`, a pointer that upstream always sets.

use serde_json::{Map, Value, json};

use super::objects::{condition, int};
use crate::machinery::meta;

/// One condition; an unchanged status keeps its `lastTransitionTime`, an unchanged reason
/// and message keep `lastUpdateTime` too (so a settled status is not rewritten).
fn condition_of(old: &Value, cond_type: &str, status: &str, reason: &str, message: &str) -> Value {
    let now = meta::now_rfc3339();
    let prev = condition(old, cond_type);
    let field =
        |c: &Map<String, Value>, k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
    let same_status = prev.is_some_and(|c| field(c, "status").as_deref() == Some(status));
    let same_text = same_status
        && prev.is_some_and(|c| {
            field(c, "reason").as_deref() == Some(reason)
                && field(c, "message").as_deref() == Some(message)
        });
    let keep = |k: &str, yes: bool| {
        prev.filter(|_| yes)
            .and_then(|c| field(c, k))
            .unwrap_or_else(|| now.clone())
    };
    json!({
        "type": cond_type,
        "status": status,
        "lastUpdateTime": keep("lastUpdateTime", same_text),
        "lastTransitionTime": keep("lastTransitionTime", same_status),
        "reason": reason,
        "message": message,
    })
}

/// Inserts `n` under `key` unless it is 0.
fn count(m: &mut Map<String, Value>, key: &str, n: i64) {
    if n != 0 {
        m.insert(key.into(), json!(n));
    }
}

/// Whether the stored status says the rollout is complete: every replica updated and
/// available, no old replica left, for the current generation.
pub(super) fn complete(d: &Value, replicas: i64) -> bool {
    int(d, "/status/updatedReplicas") == replicas
        && int(d, "/status/replicas") == replicas
        && int(d, "/status/availableReplicas") == replicas
        && int(d, "/status/observedGeneration") >= meta::generation(d)
}

/// The status the Deployment `d` (wanting `replicas`, at most `max_unavailable` of them
/// unavailable) has with these ReplicaSets; `new` is the one of its current template.
pub(super) fn status(
    d: &Value,
    new: Option<&Value>,
    all: &[&Value],
    replicas: i64,
    max_unavailable: i64,
) -> Value {
    let sum = |p: &str| all.iter().map(|rs| int(rs, p)).sum::<i64>();
    let total = sum("/status/replicas");
    let updated = new.map_or(0, |rs| int(rs, "/status/replicas"));
    let ready = sum("/status/readyReplicas");
    let available = sum("/status/availableReplicas");
    let mut m = Map::new();
    m.insert("observedGeneration".into(), json!(meta::generation(d)));
    count(&mut m, "replicas", total);
    count(&mut m, "updatedReplicas", updated);
    count(&mut m, "readyReplicas", ready);
    count(&mut m, "availableReplicas", available);
    count(&mut m, "unavailableReplicas", (replicas - available).max(0));
    let terminating = sum("/status/terminatingReplicas");
    m.insert("terminatingReplicas".into(), json!(terminating));
    if let Some(c) = d.pointer("/status/collisionCount") {
        m.insert("collisionCount".into(), c.clone());
    }
    let old = d.get("status").cloned().unwrap_or(Value::Null);
    let available_cond = if available >= replicas - max_unavailable {
        condition_of(
            &old,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        )
    } else {
        condition_of(
            &old,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    };
    let new_name = new.map(|rs| meta::name(rs).to_string()).unwrap_or_default();
    let done = updated == replicas && total == replicas && available == replicas;
    let progressing = if d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
        Some(condition_of(
            &old,
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
        ))
    } else if new.is_none() {
        condition(&old, "Progressing").map(|c| Value::Object(c.clone()))
    } else if done {
        Some(condition_of(
            &old,
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            &format!("ReplicaSet \"{new_name}\" has successfully progressed."),
        ))
    } else {
        Some(condition_of(
            &old,
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            &format!("ReplicaSet \"{new_name}\" is progressing."),
        ))
    };
    let mut conditions = vec![available_cond];
    conditions.extend(progressing);
    m.insert("conditions".into(), Value::Array(conditions));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(name: &str, replicas: i64, ready: i64) -> Value {
        json!({"metadata": {"name": name}, "status": {"replicas": replicas,
            "readyReplicas": ready, "availableReplicas": ready}})
    }

    #[test]
    fn counts_come_from_the_replicasets() {
        let d = json!({"metadata": {"generation": 2}, "spec": {"replicas": 3}});
        let (old, new) = (rs("web-a", 2, 2), rs("web-b", 2, 1));
        let s = status(&d, Some(&new), &[&old, &new], 3, 0);
        assert_eq!(s["observedGeneration"], 2);
        assert_eq!(s["replicas"], 4);
        assert_eq!(s["updatedReplicas"], 2);
        assert_eq!(s["availableReplicas"], 3);
        assert!(s.get("unavailableReplicas").is_none(), "0 is left out: {s}");
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][1]["reason"], "ReplicaSetUpdated");
        assert_eq!(
            s["conditions"][1]["message"],
            "ReplicaSet \"web-b\" is progressing."
        );
    }

    #[test]
    fn a_finished_rollout_is_available_and_complete_and_stable() {
        let d = json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}});
        let new = rs("web-b", 2, 2);
        let s = status(&d, Some(&new), &[&new], 2, 0);
        assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
        let settled = json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": s});
        assert!(complete(&settled, 2));
        assert_eq!(
            status(&settled, Some(&new), &[&new], 2, 0),
            settled["status"]
        );
    }

    #[test]
    fn too_few_available_replicas_make_it_unavailable() {
        let d = json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}});
        let new = rs("web-b", 3, 1);
        let s = status(&d, Some(&new), &[&new], 3, 0);
        assert_eq!(s["unavailableReplicas"], 2);
        assert_eq!(s["conditions"][0]["status"], "False");
        assert_eq!(s["conditions"][0]["reason"], "MinimumReplicasUnavailable");
    }
}
