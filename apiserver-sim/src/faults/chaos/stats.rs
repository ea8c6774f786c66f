//! Counts of injected faults, per kind.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A kind of fault chaos mode injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A request answered 500 or 503.
    ServerError,
    /// A request answered 429 with `Retry-After`.
    Throttle,
    /// A request delayed before it was handled.
    Latency,
    /// A response written as a trickle of few-byte writes.
    TinyWrites,
    /// A bookmark held back before it was sent.
    SlowBookmark,
    /// Every open watch ended at once.
    WatchDrop,
    /// History compacted up to the current resourceVersion.
    Compaction,
    /// Every connection cut (state kept), new ones refused for a moment.
    Restart,
    /// A connection closed as soon as accepted, during a restart's downtime.
    RefusedConnection,
    /// An admission webhook call failed as if the webhook answered 500.
    WebhookError,
    /// An admission webhook call whose connection was dropped mid-request.
    WebhookDrop,
    /// An admission webhook call delayed before it was made.
    WebhookSlow,
}

impl FaultKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FaultKind; 12] = [
        FaultKind::ServerError,
        FaultKind::Throttle,
        FaultKind::Latency,
        FaultKind::TinyWrites,
        FaultKind::SlowBookmark,
        FaultKind::WatchDrop,
        FaultKind::Compaction,
        FaultKind::Restart,
        FaultKind::RefusedConnection,
        FaultKind::WebhookError,
        FaultKind::WebhookDrop,
        FaultKind::WebhookSlow,
    ];

    /// A short name (`server_error`, `throttle`, ...), used by [`ChaosStats`]'s
    /// `Display` and JSON form.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ServerError => "server_error",
            FaultKind::Throttle => "throttle",
            FaultKind::Latency => "latency",
            FaultKind::TinyWrites => "tiny_writes",
            FaultKind::SlowBookmark => "slow_bookmark",
            FaultKind::WatchDrop => "watch_drop",
            FaultKind::Compaction => "compaction",
            FaultKind::Restart => "restart",
            FaultKind::RefusedConnection => "refused_connection",
            FaultKind::WebhookError => "webhook_error",
            FaultKind::WebhookDrop => "webhook_drop",
            FaultKind::WebhookSlow => "webhook_slow",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Live counters, one per [`FaultKind`].
#[derive(Debug, Default)]
pub(crate) struct Counters([AtomicU64; FaultKind::ALL.len()]);

impl Counters {
    /// Counts one injected fault of `kind`.
    pub fn record(&self, kind: FaultKind) {
        self.0[kind.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn snapshot(&self) -> ChaosStats {
        ChaosStats(FaultKind::ALL.map(|k| self.0[k.index()].load(Ordering::Relaxed)))
    }
}

/// How many faults of each kind chaos mode has injected (see
/// [`crate::ApiServer::chaos_stats`]). `Display` prints `total=N kind=n ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChaosStats([u64; FaultKind::ALL.len()]);

impl ChaosStats {
    /// Faults of one kind.
    pub fn get(&self, kind: FaultKind) -> u64 {
        self.0[kind.index()]
    }

    /// Faults of every kind together.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl fmt::Display for ChaosStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "total={}", self.total())?;
        for k in FaultKind::ALL {
            write!(f, " {}={}", k.name(), self.get(k))?;
        }
        Ok(())
    }
}

impl Serialize for ChaosStats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(FaultKind::ALL.len() + 1))?;
        m.serialize_entry("total", &self.total())?;
        for k in FaultKind::ALL {
            m.serialize_entry(k.name(), &self.get(k))?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_count_per_kind_and_in_total() {
        let c = Counters::default();
        c.record(FaultKind::Restart);
        c.record(FaultKind::Throttle);
        c.record(FaultKind::Throttle);
        let s = c.snapshot();
        assert_eq!(
            (
                s.get(FaultKind::Throttle),
                s.get(FaultKind::Restart),
                s.total()
            ),
            (2, 1, 3)
        );
        assert!(
            s.to_string()
                .starts_with("total=3 server_error=0 throttle=2")
        );
        let json = serde_json::to_value(s).unwrap();
        assert_eq!(
            (json["total"].as_u64(), json["restart"].as_u64()),
            (Some(3), Some(1))
        );
    }
}
