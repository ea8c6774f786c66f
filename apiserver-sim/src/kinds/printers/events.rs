//! The Event printer, for core/v1 and events.k8s.io/v1 events (upstream converts both to
//! one internal Event): `LAST SEEN TYPE REASON OBJECT MESSAGE`, and wide `SUBOBJECT SOURCE
//! FIRST SEEN COUNT NAME`.

use std::borrow::Cow;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{Column, KindPrinter, Row, text, wide};
use super::format::{int, s, s_or};
use super::time::since;

/// The Event printers.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "",
        kind: "Event",
        columns: EVENT_COLUMNS,
        row: event,
    },
    KindPrinter {
        group: "events.k8s.io",
        kind: "Event",
        columns: EVENT_COLUMNS,
        row: event,
    },
];

const EVENT_COLUMNS: &[Column] = &[
    text("Last Seen", "The time the event was last recorded."),
    text("Type", "Type of this event (Normal, Warning)."),
    text(
        "Reason",
        "Why the event happened, in a short machine-understandable form.",
    ),
    text("Object", "The object this event is about."),
    wide("Subobject", "The part of the object the event is about."),
    wide("Source", "The component reporting this event."),
    text("Message", "A human-readable description of the event."),
    wide("First Seen", "The time the event was first recorded."),
    wide("Count", "The number of times this event has occurred."),
    Column {
        name: Cow::Borrowed("Name"),
        ty: Cow::Borrowed("string"),
        format: Cow::Borrowed("name"),
        description: Cow::Borrowed(super::column::NAME_DESC),
        priority: 1,
    },
];

/// Reads an event of either version: core/v1 field names, else events.k8s.io/v1 ones.
fn ev<'a>(o: &'a Value, core: &str, events: &str) -> Option<&'a Value> {
    o.pointer(core)
        .or_else(|| o.pointer(events))
        .filter(|v| !v.is_null())
}

fn event(o: &Value, now: Timestamp) -> Row {
    let first = match ev(o, "/firstTimestamp", "/deprecatedFirstTimestamp") {
        Some(t) => since(Some(t), now),
        None => since(o.get("eventTime"), now),
    };
    let mut last = match ev(o, "/lastTimestamp", "/deprecatedLastTimestamp") {
        Some(t) => since(Some(t), now),
        None => first.clone(),
    };
    let mut count = ev(o, "/count", "/deprecatedCount")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(series) = o.get("series").filter(|v| !v.is_null()) {
        last = since(series.get("lastObservedTime"), now);
        count = int(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let involved = ev(o, "/involvedObject", "/regarding")
        .cloned()
        .unwrap_or(Value::Null);
    let kind = s(&involved, "/kind").to_lowercase();
    let target = match s(&involved, "/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    let source = ev(o, "/source", "/deprecatedSource")
        .cloned()
        .unwrap_or(Value::Null);
    let component = s_or(
        &source,
        "/component",
        s_or(o, "/reportingComponent", s(o, "/reportingController")),
    );
    let instance = s_or(&source, "/host", s(o, "/reportingInstance"));
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    let message = ev(o, "/message", "/note")
        .and_then(Value::as_str)
        .unwrap_or("");
    Row::of(vec![
        json!(last),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(target),
        json!(s(&involved, "/fieldPath")),
        json!(source),
        json!(message.trim()),
        json!(first),
        json!(count),
        json!(s(o, "/metadata/name")),
    ])
}
