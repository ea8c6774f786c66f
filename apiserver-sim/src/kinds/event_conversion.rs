//! core/v1 `Event` and events.k8s.io/v1 `Event` are one stored resource: events are stored
//! in their core/v1 form and served through events.k8s.io/v1 converted, field by field,
//! as the upstream conversion does (kubernetes `pkg/apis/events/v1/conversion.go` and the
//! generated conversions it completes): `regarding` ↔ `involvedObject`, `note` ↔
//! `message`, `reportingController` ↔ `reportingComponent`, `deprecatedSource` ↔
//! `source`, `deprecatedFirstTimestamp` ↔ `firstTimestamp`, `deprecatedLastTimestamp` ↔
//! `lastTimestamp`, `deprecatedCount` ↔ `count`; `reason`, `type`, `action`, `related`,
//! `series`, `eventTime`, `reportingInstance` and `metadata` are the same in both.

use serde_json::{Map, Value};

use crate::machinery::resource_info::Conversion;

/// (events.k8s.io/v1 name, core/v1 name) of the fields whose names differ.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Fields both forms share under one name.
const SHARED: &[&str] = &[
    "metadata",
    "reason",
    "type",
    "action",
    "related",
    "series",
    "eventTime",
    "reportingInstance",
];

/// Copies the shared fields and the renamed ones (`from_events`: events.k8s.io names in
/// `obj`), and sets the target's type meta.
fn convert(obj: &Value, from_events: bool, api_version: &str) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(api_version.into()));
    out.insert("kind".into(), Value::String("Event".into()));
    let Some(src) = obj.as_object() else {
        return Value::Object(out);
    };
    for f in SHARED {
        if let Some(v) = src.get(*f) {
            out.insert((*f).to_string(), v.clone());
        }
    }
    for (events_name, core_name) in RENAMED {
        let (from, to) = if from_events {
            (events_name, core_name)
        } else {
            (core_name, events_name)
        };
        if let Some(v) = src.get(*from) {
            out.insert((*to).to_string(), v.clone());
        }
    }
    Value::Object(out)
}

/// An events.k8s.io/v1 event in its stored (core/v1) form.
fn to_stored(_version: &str, obj: Value) -> Value {
    convert(&obj, true, "v1")
}

/// A stored (core/v1) event as events.k8s.io/v1 serves it.
fn to_served(_version: &str, obj: &Value) -> Value {
    convert(obj, false, "events.k8s.io/v1")
}

/// The conversion of events.k8s.io events.
pub const CONVERSION: Conversion = Conversion {
    to_stored,
    to_served,
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_ways() {
        let events = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"}, "eventTime": "2025-01-01T00:00:00.000000Z",
            "reportingController": "ctl", "reportingInstance": "ctl-1", "action": "Scale",
            "reason": "Scaled", "regarding": {"kind": "Pod", "name": "p"}, "note": "hello",
            "type": "Normal", "series": {"count": 2, "lastObservedTime": "2025-01-01T00:00:01.000000Z"},
            "deprecatedSource": {"component": "c"}, "deprecatedCount": 3});
        let core = to_stored("v1", events.clone());
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "p");
        assert_eq!(core["message"], "hello");
        assert_eq!(core["reportingComponent"], "ctl");
        assert_eq!(core["source"]["component"], "c");
        assert_eq!(core["count"], 3);
        assert_eq!(core["series"]["count"], 2);
        assert_eq!(to_served("v1", &core), events);
    }
}
