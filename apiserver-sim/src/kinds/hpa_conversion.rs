//! autoscaling/v1 and autoscaling/v2 `HorizontalPodAutoscaler` are versions of one
//! resource, stored as v2. As upstream (kubernetes `pkg/apis/autoscaling/v1/conversion.go`):
//! v1's `targetCPUUtilizationPercentage` is v2's CPU `Resource` metric with a
//! `Utilization` target, v1's `currentCPUUtilizationPercentage` the matching current
//! metric; what v1 cannot express (other metrics, current metrics, conditions, behavior)
//! travels in the `autoscaling.alpha.kubernetes.io/*` annotations of the v1 form, so a
//! v1 round trip keeps it.

use serde_json::{Map, Value, json};

use crate::machinery::resource_info::Conversion;

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// Spec and status fields both versions share.
const SPEC_SHARED: &[&str] = &["scaleTargetRef", "minReplicas", "maxReplicas"];
const STATUS_SHARED: &[&str] = &[
    "observedGeneration",
    "lastScaleTime",
    "currentReplicas",
    "desiredReplicas",
];

fn copy(from: Option<&Value>, fields: &[&str], to: &mut Map<String, Value>) {
    for f in fields {
        if let Some(v) = from.and_then(|o| o.get(*f)) {
            to.insert((*f).to_string(), v.clone());
        }
    }
}

/// Whether a v2 metric (spec `target` or status `current`) is the CPU utilization one.
fn is_cpu_utilization(m: &Value, part: &str) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
        && m.pointer(&format!("/resource/{part}/averageUtilization"))
            .is_some()
        && (part == "current"
            || m.pointer("/resource/target/type").and_then(Value::as_str) == Some("Utilization"))
}

fn annotations(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Moves an annotation holding JSON out of `ann`, parsed.
fn take_json(ann: &mut Map<String, Value>, key: &str) -> Option<Value> {
    let raw = ann.remove(key)?;
    serde_json::from_str(raw.as_str()?).ok()
}

fn set_annotations(out: &mut Value, ann: Map<String, Value>) {
    if let Some(md) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        if ann.is_empty() {
            md.remove("annotations");
        } else {
            md.insert("annotations".into(), Value::Object(ann));
        }
    }
}

/// Splits v2 metrics (`part`: spec `target` or status `current`) into the CPU utilization
/// v1 has a field for and the others, as the JSON of their annotation.
fn split_cpu(metrics: Option<&Value>, part: &str) -> (Option<Value>, Option<Value>) {
    let (mut cpu, mut others) = (None, Vec::new());
    for m in metrics.and_then(Value::as_array).into_iter().flatten() {
        match m.pointer(&format!("/resource/{part}/averageUtilization")) {
            Some(u) if is_cpu_utilization(m, part) => cpu = Some(u.clone()),
            _ => others.push(m.clone()),
        }
    }
    let others = (!others.is_empty()).then(|| Value::String(Value::Array(others).to_string()));
    (cpu, others)
}

/// v2 metrics (`part`: `target` or `current`) from v1's CPU utilization and the others of
/// the annotation.
fn join_cpu(cpu: Option<&Value>, part: &str, more: Option<Value>) -> Option<Value> {
    let mut metrics: Vec<Value> = cpu
        .map(|u| {
            let mut resource = json!({"name": "cpu", part: {"averageUtilization": u}});
            if part == "target" {
                resource[part]["type"] = json!("Utilization");
            }
            json!({"type": "Resource", "resource": resource})
        })
        .into_iter()
        .collect();
    if let Some(Value::Array(more)) = more {
        metrics.extend(more);
    }
    (!metrics.is_empty()).then_some(Value::Array(metrics))
}

/// v2 (stored) → v1.
fn v2_to_v1(obj: &Value) -> Value {
    let mut out = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler"});
    if let Some(md) = obj.get("metadata") {
        out["metadata"] = md.clone();
    }
    let mut ann = annotations(obj);
    let mut spec = Map::new();
    copy(obj.get("spec"), SPEC_SHARED, &mut spec);
    let (cpu, others) = split_cpu(obj.pointer("/spec/metrics"), "target");
    spec.extend(cpu.map(|u| ("targetCPUUtilizationPercentage".into(), u)));
    ann.extend(others.map(|o| (METRICS.into(), o)));
    if let Some(b) = obj.pointer("/spec/behavior") {
        ann.insert(BEHAVIOR.into(), Value::String(b.to_string()));
    }
    out["spec"] = Value::Object(spec);
    if let Some(st) = obj.get("status") {
        let mut status = Map::new();
        copy(Some(st), STATUS_SHARED, &mut status);
        let (cpu, others) = split_cpu(st.get("currentMetrics"), "current");
        status.extend(cpu.map(|u| ("currentCPUUtilizationPercentage".into(), u)));
        ann.extend(others.map(|o| (CURRENT_METRICS.into(), o)));
        if let Some(c) = st.get("conditions") {
            ann.insert(CONDITIONS.into(), Value::String(c.to_string()));
        }
        out["status"] = Value::Object(status);
    }
    set_annotations(&mut out, ann);
    out
}

/// v1 → v2 (stored).
fn v1_to_v2(obj: &Value) -> Value {
    let mut out = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"});
    if let Some(md) = obj.get("metadata") {
        out["metadata"] = md.clone();
    }
    let mut ann = annotations(obj);
    let mut spec = Map::new();
    copy(obj.get("spec"), SPEC_SHARED, &mut spec);
    let cpu = obj.pointer("/spec/targetCPUUtilizationPercentage");
    let metrics = join_cpu(cpu, "target", take_json(&mut ann, METRICS));
    spec.extend(metrics.map(|m| ("metrics".into(), m)));
    if let Some(b) = take_json(&mut ann, BEHAVIOR) {
        spec.insert("behavior".into(), b);
    }
    out["spec"] = Value::Object(spec);
    let current_more = take_json(&mut ann, CURRENT_METRICS);
    let conditions = take_json(&mut ann, CONDITIONS);
    if let Some(st) = obj.get("status") {
        let mut status = Map::new();
        copy(Some(st), STATUS_SHARED, &mut status);
        let current = join_cpu(
            st.get("currentCPUUtilizationPercentage"),
            "current",
            current_more,
        );
        status.extend(current.map(|m| ("currentMetrics".into(), m)));
        if let Some(c) = conditions {
            status.insert("conditions".into(), c);
        }
        out["status"] = Value::Object(status);
    }
    set_annotations(&mut out, ann);
    out
}

fn to_stored(version: &str, obj: Value) -> Value {
    if version == "v1" { v1_to_v2(&obj) } else { obj }
}

fn to_served(version: &str, obj: &Value) -> Value {
    if version == "v1" {
        return v2_to_v1(obj);
    }
    let mut o = obj.clone();
    if let Some(m) = o.as_object_mut() {
        m.insert(
            "apiVersion".into(),
            Value::String(format!("autoscaling/{version}")),
        );
    }
    o
}

/// The conversion between autoscaling/v1 and the stored autoscaling/v2.
pub const CONVERSION: Conversion = Conversion {
    to_stored,
    to_served,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_target_both_ways_and_other_metrics_survive_v1() {
        let v2 = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 5,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}]}});
        let v1 = to_served("v1", &v2);
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        assert!(v1["metadata"]["annotations"][METRICS].is_string());
        assert_eq!(to_stored("v1", v1), v2);
    }
}
