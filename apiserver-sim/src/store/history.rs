//! The bounded per-resource event log that watches resume from.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// Type of a stored change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Object created.
    Added,
    /// Object changed.
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change of one object.
#[derive(Debug)]
pub struct Event {
    /// RV of the change.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// The new state (for DELETED: the last state stamped with the delete's RV).
    pub obj: Arc<Value>,
    /// The previous state, if any.
    pub prev: Option<Arc<Value>>,
    /// The watch line `{"type":KIND,"object":OBJ}\n` for the stored representation,
    /// serialized once and shared by every watcher (and, sliced, by the stored object).
    pub line: Bytes,
    /// The object's namespace, held inline so that namespace-scoped watchers filter
    /// without reading the object (which another core just wrote).
    pub ns: InlineNs,
}

impl Event {
    /// Builds an event, serializing the object once.
    pub fn new(rv: u64, kind: EventType, obj: Arc<Value>, prev: Option<Arc<Value>>) -> Self {
        let line = super::line::encode_line(kind.as_str(), &obj);
        let ns = InlineNs::new(crate::machinery::meta::namespace(&obj));
        Self {
            rv,
            kind,
            obj,
            prev,
            line,
            ns,
        }
    }

    /// Whether the object lives in namespace `ns`.
    pub fn in_namespace(&self, ns: &str) -> bool {
        match self.ns.as_str() {
            Some(n) => n == ns,
            None => crate::machinery::meta::namespace(&self.obj) == ns,
        }
    }

    /// `obj` as compact JSON (a slice of [`Event::line`], no copy).
    pub fn json(&self) -> Bytes {
        super::line::line_object(&self.line, self.kind.as_str())
    }
}

/// A namespace name stored inline (namespaces are DNS labels of at most 63 bytes).
#[derive(Clone, Copy)]
pub struct InlineNs {
    /// Length, or `u8::MAX` when the name did not fit.
    len: u8,
    bytes: [u8; 63],
}

impl InlineNs {
    /// Holds `ns` (or notes that it did not fit).
    pub fn new(ns: &str) -> Self {
        let mut bytes = [0; 63];
        match bytes.get_mut(..ns.len()) {
            Some(slot) => {
                slot.copy_from_slice(ns.as_bytes());
                Self {
                    len: ns.len() as u8,
                    bytes,
                }
            }
            None => Self {
                len: u8::MAX,
                bytes,
            },
        }
    }

    /// The name, or None when it did not fit (read it from the object then).
    pub fn as_str(&self) -> Option<&str> {
        let b = self.bytes.get(..usize::from(self.len))?;
        std::str::from_utf8(b).ok()
    }
}

impl std::fmt::Debug for InlineNs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("InlineNs").field(&self.as_str()).finish()
    }
}

/// Ring buffer of recent events plus the oldest RV still resumable.
#[derive(Debug)]
pub(crate) struct History {
    events: VecDeque<Arc<Event>>,
    limit: usize,
    oldest_ok: u64,
}

impl History {
    pub(crate) fn new(start_rv: u64, limit: usize) -> Self {
        Self {
            events: VecDeque::new(),
            limit: limit.max(1),
            oldest_ok: start_rv,
        }
    }

    pub(crate) fn push(&mut self, ev: Arc<Event>) {
        self.events.push_back(ev);
        while self.events.len() > self.limit {
            if let Some(old) = self.events.pop_front() {
                self.oldest_ok = old.rv;
            }
        }
    }

    pub(crate) fn oldest_ok(&self) -> u64 {
        self.oldest_ok
    }

    pub(crate) fn compact(&mut self, rv: u64) {
        self.events.clear();
        self.oldest_ok = self.oldest_ok.max(rv);
    }

    /// Events with rv > `from`, or Err(oldest_ok) when `from` is too old.
    pub(crate) fn since(&self, from: u64) -> Result<Vec<Arc<Event>>, u64> {
        if from < self.oldest_ok {
            return Err(self.oldest_ok);
        }
        let start = self.events.partition_point(|e| e.rv <= from);
        Ok(self.events.iter().skip(start).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(rv: u64) -> Arc<Event> {
        Arc::new(Event::new(rv, EventType::Added, Arc::new(json!({})), None))
    }

    #[test]
    fn namespaces_are_held_inline() {
        let e = Event::new(
            1,
            EventType::Added,
            Arc::new(json!({"metadata": {"namespace": "team-a"}})),
            None,
        );
        assert!(e.in_namespace("team-a") && !e.in_namespace("team"));
        let long = "x".repeat(70);
        let e = Event::new(
            1,
            EventType::Added,
            Arc::new(json!({"metadata": {"namespace": long}})),
            None,
        );
        assert_eq!(e.ns.as_str(), None);
        assert!(e.in_namespace(&long), "falls back to the object");
        assert_eq!(InlineNs::new("").as_str(), Some(""));
    }

    #[test]
    fn window_evicts_and_reports_too_old() {
        let mut h = History::new(10, 3);
        for rv in 11..=15 {
            h.push(ev(rv));
        }
        // 11 and 12 evicted: oldest resumable RV is 12.
        assert_eq!(h.oldest_ok(), 12);
        assert_eq!(h.since(11).err(), Some(12));
        let got: Vec<u64> = h
            .since(12)
            .unwrap_or_default()
            .iter()
            .map(|e| e.rv)
            .collect();
        assert_eq!(got, vec![13, 14, 15]);
        h.compact(15);
        assert_eq!(h.since(14).err(), Some(15));
        assert_eq!(h.since(15).map(|v| v.len()), Ok(0));
    }
}
