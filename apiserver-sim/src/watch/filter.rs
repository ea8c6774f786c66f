//! [`Filter`]: what one watcher sees (namespace, selectors, selector transitions) and how
//! its events are encoded (representation, served version, cached lines; JSON lines or
//! protobuf frames; a `Table` per event for `kubectl get -w`, with column definitions in
//! the first one only).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};

use crate::api::format::Format;
use crate::api::protobuf;
use crate::api::repr::{self, Repr, to_bytes};
use crate::api::table::TableWriter;
use crate::api::watch_line::{INITIAL_EVENTS_END, error_line, line, push_line};
use crate::machinery::query::ListOptions;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::ApiError;
use crate::store::{Event, EventType, Stored};

/// How a watcher sees objects: namespace, selectors and the served version.
pub(super) struct Filter {
    /// The namespace a namespaced watch is limited to.
    pub ns: Option<String>,
    /// The watch's options: selectors, resourceVersion, bookmarks, timeout.
    pub opts: ListOptions,
    /// Representation of objects on this stream.
    pub repr: Repr,
    /// The watched resource.
    pub info: Arc<ResourceInfo>,
    /// The version objects are served in.
    pub version: String,
    /// JSON lines or protobuf frames.
    pub format: Format,
    /// The writer of each event's `Table`, when the watch asked for tables.
    pub table: Option<TableWriter>,
    /// Whether a table with column definitions went out already.
    pub headers_sent: AtomicBool,
}

impl Filter {
    /// True when every stored event goes out exactly as stored.
    fn trivial(&self) -> bool {
        self.format == Format::Json
            && self.ns.is_none()
            && self.opts.selectors.is_empty()
            && self.repr == Repr::Full
            && self.info.as_stored(&self.version)
    }

    pub(super) fn matches(&self, obj: &Value) -> bool {
        self.ns
            .as_deref()
            .is_none_or(|n| crate::machinery::meta::namespace(obj) == n)
            && self.opts.selectors.matches(obj)
    }

    /// Whether the event's new state (or, with `prev`, its previous one) matches. The
    /// namespace never changes between the two, and is read from the event itself.
    fn event_matches(&self, ev: &Event, prev: bool) -> bool {
        let obj = if prev {
            ev.prev.as_deref()
        } else {
            Some(&*ev.obj)
        };
        let Some(obj) = obj else { return false };
        self.ns.as_deref().is_none_or(|n| ev.in_namespace(n))
            && (self.opts.selectors.is_empty() || self.opts.selectors.matches(obj))
    }

    fn render(&self, obj: &Value) -> Bytes {
        if let Some(t) = &self.table {
            return t.object(obj, !self.headers_sent.swap(true, Ordering::Relaxed));
        }
        repr::render(&self.info, &self.version, obj, self.repr)
    }

    /// One event for a stored object (its cached JSON reused when it goes out as stored).
    pub(super) fn stored_event(&self, kind: &str, s: &Stored) -> Bytes {
        match self.format {
            Format::Json if self.table.is_some() => line(kind, &self.render(&s.obj)),
            Format::Json => line(
                kind,
                &repr::render_cached(&self.info, &self.version, &s.obj, &s.json, self.repr),
            ),
            Format::Protobuf => self.frame(kind, &s.obj),
        }
    }

    /// Whether objects go out exactly as stored (the event's cached encoding can be used).
    fn as_stored(&self) -> bool {
        self.format == Format::Json && self.repr == Repr::Full && self.info.as_stored(&self.version)
    }

    /// One event for `obj` (a JSON line or a protobuf frame).
    pub(super) fn event(&self, kind: &str, obj: &Value) -> Bytes {
        match self.format {
            Format::Json => line(kind, &self.render(obj)),
            Format::Protobuf => self.frame(kind, obj),
        }
    }

    /// The protobuf frame of an event for `obj` (a JSON line when its type has no
    /// protobuf form, which negotiation rules out).
    fn frame(&self, kind: &str, obj: &Value) -> Bytes {
        let (api_version, k) = repr::type_meta(&self.info, &self.version, self.repr, false);
        let view = match self.repr {
            Repr::Metadata => json!({"apiVersion": api_version, "kind": k,
                "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))}),
            _ => self.info.to_served(&self.version, obj),
        };
        match protobuf::encode_object(&api_version, &k, &view) {
            Some(doc) => protobuf::watch_frame(kind, &doc),
            None => line(kind, &self.render(obj)),
        }
    }

    /// The ERROR event carrying a `Status`.
    pub(super) fn error(&self, err: &ApiError) -> Bytes {
        match self.format {
            Format::Json => error_line(err),
            Format::Protobuf => {
                protobuf::watch_frame("ERROR", &protobuf::encode_status(&err.to_status()))
            }
        }
    }

    /// Appends `{"type":KIND,"object":OBJ}\n` (or its protobuf frame) for `obj` to `buf`.
    fn push_line(&self, buf: &mut BytesMut, kind: &str, ev: &Event, obj: &Value) {
        if self.format == Format::Protobuf {
            buf.extend_from_slice(&self.frame(kind, obj));
            return;
        }
        if self.as_stored() && std::ptr::eq(obj, ev.obj.as_ref()) {
            if kind == ev.kind.as_str() {
                buf.extend_from_slice(&ev.line);
            } else {
                push_line(buf, kind, &ev.json());
            }
        } else {
            push_line(buf, kind, &self.render(obj));
        }
    }

    /// Appends the line to send for a stored event, if this watcher should see it; returns
    /// whether it did.
    pub(super) fn write_event(&self, ev: &Event, buf: &mut BytesMut) -> bool {
        if self.trivial() {
            buf.extend_from_slice(&ev.line);
            return true;
        }
        let new_m = self.event_matches(ev, false);
        let old_m = self.event_matches(ev, true);
        let kind = match ev.kind {
            EventType::Added if new_m => "ADDED",
            EventType::Deleted if old_m => "DELETED",
            EventType::Modified => match (old_m, new_m) {
                (true, true) => "MODIFIED",
                (false, true) => "ADDED",
                (true, false) => {
                    let mut old = ev.prev.as_deref().cloned().unwrap_or(Value::Null);
                    crate::machinery::meta::set_str(
                        &mut old,
                        "resourceVersion",
                        &ev.rv.to_string(),
                    );
                    buf.extend_from_slice(&self.event("DELETED", &old));
                    return true;
                }
                (false, false) => return false,
            },
            _ => return false,
        };
        self.push_line(buf, kind, ev, &ev.obj);
        true
    }

    pub(super) fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut md = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            md["annotations"] = json!({INITIAL_EVENTS_END: "true"});
        }
        // On a table watch the bookmark object goes out as a table too, as upstream's
        // watch encoder transforms every event's object.
        let repr = if self.table.is_some() {
            Repr::Full
        } else {
            self.repr
        };
        let (api_version, kind) = repr::type_meta(&self.info, &self.version, repr, false);
        let obj = json!({"apiVersion": api_version, "kind": kind, "metadata": md});
        match self.format {
            Format::Json if self.table.is_some() => line("BOOKMARK", &self.render(&obj)),
            Format::Json => line("BOOKMARK", &to_bytes(&obj)),
            Format::Protobuf => protobuf::encode_object(&api_version, &kind, &obj)
                .map(|doc| protobuf::watch_frame("BOOKMARK", &doc))
                .unwrap_or_else(|| line("BOOKMARK", &to_bytes(&obj))),
        }
    }
}
