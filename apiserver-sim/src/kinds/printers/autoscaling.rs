//! The HorizontalPodAutoscaler printer (autoscaling/v2, and v1 whose CPU utilization
//! target upstream converts to a `Resource` metric): `REFERENCE TARGETS MINPODS MAXPODS
//! REPLICAS AGE`, targets as `current/target` per metric, two at most.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{AGE, KindPrinter, NAME, Row, text};
use super::format::{arr, int, s};
use super::time::age;

const COLUMNS: &[super::column::Column] = &[
    NAME,
    text("Reference", "The scale target the autoscaler manages."),
    text("Targets", "Current and target values of the metrics."),
    text("MinPods", "Lower limit of the number of replicas."),
    text("MaxPods", "Upper limit of the number of replicas."),
    text("Replicas", "Current number of replicas."),
    AGE,
];

/// Printers of autoscaling kinds.
pub(super) const KINDS: &[KindPrinter] = &[KindPrinter {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    columns: COLUMNS,
    row,
}];

/// A quantity (string or number) as text; `<nil>` when absent, as upstream prints a nil one.
fn quantity(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(q)) => q.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "<nil>".into(),
    }
}

/// Spec and status metrics in the v2 shape (a v1 CPU utilization becomes one metric).
fn metrics(o: &Value) -> (Vec<Value>, Vec<Value>) {
    if let Some(cpu) = o
        .pointer("/spec/targetCPUUtilizationPercentage")
        .and_then(Value::as_i64)
    {
        let spec = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": cpu}}});
        let status = o
            .pointer("/status/currentCPUUtilizationPercentage")
            .and_then(Value::as_i64)
            .map(|c| json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": c}}}));
        return (vec![spec], status.into_iter().collect());
    }
    (
        arr(o, "/spec/metrics").to_vec(),
        arr(o, "/status/currentMetrics").to_vec(),
    )
}

/// `current/target` of a metric whose target is a value or an average value.
fn value_metric(spec: &Value, status: Option<&Value>) -> String {
    let target = spec.get("target").unwrap_or(&Value::Null);
    if let Some(avg) = target.get("averageValue").filter(|v| !v.is_null()) {
        let current = status
            .and_then(|s| s.pointer("/current/averageValue"))
            .map_or_else(|| "<unknown>".to_string(), |v| quantity(Some(v)));
        return format!("{current}/{} (avg)", quantity(Some(avg)));
    }
    let current = status.map_or_else(
        || "<unknown>".to_string(),
        |s| quantity(s.pointer("/current/value")),
    );
    format!("{current}/{}", quantity(target.get("value")))
}

/// `name: current/target` of a resource (or container resource) metric.
fn resource_metric(spec: &Value, status: Option<&Value>) -> String {
    let name = s(spec, "/name");
    let target = spec.get("target").unwrap_or(&Value::Null);
    if let Some(avg) = target.get("averageValue").filter(|v| !v.is_null()) {
        let current = status.map_or_else(
            || "<unknown>".to_string(),
            |s| quantity(s.pointer("/current/averageValue")),
        );
        return format!("{name}: {current}/{}", quantity(Some(avg)));
    }
    let current = status
        .and_then(|s| s.pointer("/current/averageUtilization"))
        .and_then(Value::as_i64)
        .map_or_else(|| "<unknown>".to_string(), |u| format!("{u}%"));
    let target = target
        .get("averageUtilization")
        .and_then(Value::as_i64)
        .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
    format!("{name}: {current}/{target}")
}

fn targets(o: &Value) -> String {
    let (specs, statuses) = metrics(o);
    if specs.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 2;
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let field = match s(spec, "/type") {
                "External" => "external",
                "Pods" => "pods",
                "Object" => "object",
                "Resource" => "resource",
                "ContainerResource" => "containerResource",
                _ => return "<unknown type>".to_string(),
            };
            let status = statuses
                .get(i)
                .and_then(|st| st.get(field))
                .filter(|v| !v.is_null());
            let spec = spec.get(field).unwrap_or(&Value::Null);
            match field {
                "resource" | "containerResource" => resource_metric(spec, status),
                "pods" => {
                    let current = status.map_or_else(
                        || "<unknown>".to_string(),
                        |s| quantity(s.pointer("/current/averageValue")),
                    );
                    format!(
                        "{current}/{}",
                        quantity(spec.pointer("/target/averageValue"))
                    )
                }
                _ => value_metric(spec, status),
            }
        })
        .collect();
    let shown = list
        .iter()
        .take(MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > MAX {
        format!("{shown} + {} more...", list.len() - MAX)
    } else {
        shown
    }
}

fn row(o: &Value, now: Timestamp) -> Row {
    let reference = format!(
        "{}/{}",
        s(o, "/spec/scaleTargetRef/kind"),
        s(o, "/spec/scaleTargetRef/name")
    );
    let min = o
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or_else(|| "<unset>".to_string(), |m| m.to_string());
    Row::of(vec![
        json!(s(o, "/metadata/name")),
        json!(reference),
        json!(targets(o)),
        json!(min),
        json!(int(o, "/spec/maxReplicas")),
        json!(int(o, "/status/currentReplicas")),
        json!(age(o, now)),
    ])
}
