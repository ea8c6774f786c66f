//! The Lease's history as the parent observed it, and the safety checks over it and the
//! members' reconcile logs.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::members::journal::Interval;
use crate::target::Target;

/// One holder's term, from the Lease's own fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub holder: String,
    /// `acquireTime`: set by the holder before the write that made it leader.
    pub acquired_us: i64,
    /// `leaseTransitions` of the record.
    pub transitions: i32,
}

/// Every term seen, in order.
#[derive(Clone, Default)]
pub struct History(Arc<Mutex<Vec<Term>>>);

impl History {
    /// Reads the Lease every few milliseconds until `stop` (from the simulator's store every
    /// 5 ms; from a real server with a GET every 20 ms). A term lasts at least a lease duration
    /// (a successor waits for the lease to expire), so none is missed;
    /// [`check_complete`](Self::check_complete) verifies it from the transition count.
    pub async fn record(self, target: Arc<Target>, stop: CancellationToken) {
        let every = match *target {
            Target::Sim { .. } => Duration::from_millis(5),
            Target::Real { .. } => Duration::from_millis(20),
        };
        while !stop.is_cancelled() {
            if let Some(spec) = target.lease().await {
                let holder = spec.holder_identity.unwrap_or_default();
                let acquired_us = spec.acquire_time.map_or(0, |t| t.0.as_microsecond());
                let term = Term {
                    holder,
                    acquired_us,
                    transitions: spec.lease_transitions.unwrap_or(0),
                };
                let mut terms = self.0.lock();
                let changed = terms.last().is_none_or(|last| {
                    (&last.holder, last.acquired_us) != (&term.holder, term.acquired_us)
                });
                if changed && !term.holder.is_empty() {
                    terms.push(term);
                }
            }
            tokio::time::sleep(every).await;
        }
    }

    pub fn terms(&self) -> Vec<Term> {
        self.0.lock().clone()
    }

    /// Every transition was observed: `leaseTransitions` grows by one from term to term.
    pub fn check_complete(&self) -> Result<(), String> {
        let terms = self.terms();
        for pair in terms.windows(2) {
            if pair[1].transitions != pair[0].transitions + 1 {
                return Err(format!(
                    "lease history has a gap between {:?} and {:?}",
                    pair[0], pair[1]
                ));
            }
        }
        Ok(())
    }
}

/// Never two leaders acting at once: every reconcile lies inside a term of its member (it
/// started after the member acquired the Lease and ended before the next holder acquired it),
/// and no two members' reconciles overlap in time.
pub fn safety_violations(terms: &[Term], intervals: &[Interval]) -> Vec<String> {
    let mut out = Vec::new();
    for r in intervals {
        let inside = terms.iter().enumerate().any(|(i, term)| {
            let next = terms.get(i + 1).map_or(i64::MAX, |next| next.acquired_us);
            term.holder == r.member && term.acquired_us <= r.start_us && r.end_us <= next
        });
        if !inside {
            out.push(format!(
                "{} {} by {} ({}..{} µs{}) lies outside every term of {}",
                r.controller,
                r.key,
                r.member,
                r.start_us,
                r.end_us,
                if r.killed { ", killed" } else { "" },
                r.member
            ));
        }
    }
    let mut sorted: Vec<&Interval> = intervals.iter().collect();
    sorted.sort_by_key(|r| r.start_us);
    // The latest end of each member's reconciles started so far.
    let mut latest_end: Vec<(&str, i64)> = Vec::new();
    for r in sorted {
        for (member, end) in &latest_end {
            if *member != r.member && r.start_us < *end {
                out.push(format!(
                    "{} {} by {} started at {} µs while {member} was still reconciling (until {end} µs)",
                    r.controller, r.key, r.member, r.start_us
                ));
            }
        }
        match latest_end
            .iter_mut()
            .find(|(member, _)| *member == r.member)
        {
            Some((_, end)) => *end = (*end).max(r.end_us),
            None => latest_end.push((r.member.as_str(), r.end_us)),
        }
    }
    out
}
