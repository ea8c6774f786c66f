//! What a Deployment's status may hold, as kube-apiserver validates a status write
//! (`ValidateDeploymentStatus`): counts and generations not negative, and no more updated,
//! ready or available replicas than replicas, no more available than ready ones.

use serde_json::{Value, json};

use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{Cause, invalid_json_value};

/// The causes of refusing `obj`'s status (none for kinds other than a Deployment).
pub(super) fn validate(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    if !(info.group == "apps" && info.kind == "Deployment") {
        return Vec::new();
    }
    let status = obj.get("status").unwrap_or(&Value::Null);
    let count = |k: &str| status.get(k).and_then(Value::as_i64).unwrap_or(0);
    let mut causes = Vec::new();
    let mut nonnegative = |k: &str, v: i64| {
        if v < 0 {
            causes.push(invalid_json_value(
                &format!("status.{k}"),
                &json!(v),
                "must be greater than or equal to 0",
            ));
        }
    };
    for k in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ] {
        nonnegative(k, count(k));
    }
    for k in ["terminatingReplicas", "collisionCount"] {
        if let Some(v) = status.get(k).and_then(Value::as_i64) {
            nonnegative(k, v);
        }
    }
    let replicas = count("replicas");
    for k in ["updatedReplicas", "readyReplicas", "availableReplicas"] {
        if count(k) > replicas {
            causes.push(invalid_json_value(
                &format!("status.{k}"),
                &json!(count(k)),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if count("availableReplicas") > count("readyReplicas") {
        causes.push(invalid_json_value(
            "status.availableReplicas",
            &json!(count("availableReplicas")),
            "cannot be greater than readyReplicas",
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_has_no_more_available_than_ready_replicas() {
        let info = crate::kinds::builtins::builtins()
            .into_iter()
            .find(|i| i.group == "apps" && i.kind == "Deployment")
            .unwrap();
        let ok = json!({"status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2}});
        assert!(validate(&info, &ok).is_empty());
        let bad = json!({"status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2}});
        let causes = validate(&info, &bad);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "status.availableReplicas");
        assert_eq!(
            causes[0].message,
            "Invalid value: 2: cannot be greater than readyReplicas"
        );
        let negative = json!({"status": {"replicas": -1}});
        assert_eq!(validate(&info, &negative)[0].field, "status.replicas");
    }
}
