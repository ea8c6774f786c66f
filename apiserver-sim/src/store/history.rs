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
}

impl Event {
    /// Builds an event, serializing the object once.
    pub fn new(rv: u64, kind: EventType, obj: Arc<Value>, prev: Option<Arc<Value>>) -> Self {
        let line = super::encode_line(kind.as_str(), &obj);
        Self {
            rv,
            kind,
            obj,
            prev,
            line,
        }
    }

    /// `obj` as compact JSON (a slice of [`Event::line`], no copy).
    pub fn json(&self) -> Bytes {
        super::line_object(&self.line, self.kind.as_str())
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
