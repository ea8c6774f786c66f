//! The soak's journal: every reconcile as the soak saw it (who ran it, the Lease holder at its
//! start and end, the version it read), the journaling reconcilers, and the checks and reports
//! made from the whole journal.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use apiserver_sim::ApiServer;
use controller_runtime::controller::{Action, Context, ReconcileError, Reconciler, Request};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::LEASE;
use crate::workload;

/// How a reconcile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Ok,
    Failed,
    /// Dropped before it returned (its manager stopped or lost the lease).
    Aborted,
}

/// One reconcile as the soak saw it.
#[derive(Debug, Clone)]
pub(super) struct Record {
    pub(super) controller: &'static str,
    pub(super) key: String,
    /// Identity of the manager that ran it.
    pub(super) member: String,
    /// The Lease holder on the server when it started and when it returned.
    pub(super) holder_at_start: Option<String>,
    pub(super) holder_at_end: Option<String>,
    pub(super) start: Instant,
    pub(super) end: Instant,
    /// The resourceVersion of the primary object in the cache (None: absent).
    pub(super) seen_rv: Option<String>,
    pub(super) outcome: Outcome,
    /// The error of a failed reconcile.
    pub(super) error: Option<String>,
}

/// Every reconcile of the run.
#[derive(Clone, Default)]
pub(super) struct Journal(pub(super) Arc<Mutex<Vec<Record>>>);

/// What a reconciler needs to journal its reconciles.
#[derive(Clone)]
pub(super) struct Witness {
    pub(super) journal: Journal,
    pub(super) member: String,
    pub(super) server: Arc<ApiServer>,
}

impl Witness {
    fn holder(&self) -> Option<String> {
        self.server
            .list::<Lease>()
            .into_iter()
            .find(|l| l.name_any() == LEASE)
            .and_then(|l| l.spec?.holder_identity)
            .filter(|h| !h.is_empty())
    }

    pub(super) fn begin(
        &self,
        controller: &'static str,
        req: &Request,
        seen_rv: Option<String>,
    ) -> InFlight {
        InFlight {
            witness: self.clone(),
            record: Some(Record {
                controller,
                key: req.key.to_string(),
                member: self.member.clone(),
                holder_at_start: self.holder(),
                holder_at_end: None,
                start: Instant::now(),
                end: Instant::now(),
                seen_rv,
                outcome: Outcome::Aborted,
                error: None,
            }),
        }
    }
}

/// A reconcile in progress; journaled when dropped, so an aborted reconcile is journaled too.
pub(super) struct InFlight {
    pub(super) witness: Witness,
    pub(super) record: Option<Record>,
}

impl InFlight {
    pub(super) fn finish<T, E: std::fmt::Display>(mut self, result: Result<T, E>) -> Result<T, E> {
        if let Some(r) = self.record.as_mut() {
            r.outcome = if result.is_ok() {
                Outcome::Ok
            } else {
                Outcome::Failed
            };
            r.error = result.as_ref().err().map(ToString::to_string);
            r.holder_at_end = self.witness.holder();
        }
        result
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(mut r) = self.record.take() {
            r.end = Instant::now();
            self.witness.journal.0.lock().push(r);
        }
    }
}

/// `mirror` (see `workload::mirror`), journaled.
pub(super) struct Mirror(pub(super) Witness);

impl Reconciler<ConfigMap> for Mirror {
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        req: Request,
        ctx: Context<ConfigMap>,
    ) -> Result<Action, ReconcileError> {
        let seen = ctx.get().and_then(|c| c.resource_version());
        let guard = self.0.begin("mirror", &req, seen);
        guard.finish(workload::mirror(&req, &ctx).await)
    }
}

/// `stamp` (see `workload::stamp`), journaled.
pub(super) struct Stamp(pub(super) Witness);

impl Reconciler<Secret> for Stamp {
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        req: Request,
        ctx: Context<Secret>,
    ) -> Result<Action, ReconcileError> {
        let seen = ctx.get().and_then(|s| s.resource_version());
        let guard = self.0.begin("stamp", &req, seen);
        guard.finish(workload::stamp(&ctx).await)
    }
}

/// The safety properties, over the whole journal: no overlapping reconciles of one key, and
/// every reconcile run by the Lease holder.
pub(super) fn safety_violations(journal: &Journal) -> Vec<String> {
    let mut records = journal.0.lock().clone();
    records.sort_by_key(|r| (r.controller, r.key.clone(), r.start));
    let mut out = Vec::new();
    for pair in records.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.controller == b.controller && a.key == b.key && b.start < a.end {
            out.push(format!(
                "{} {} reconciled concurrently by {} and {}",
                a.controller, a.key, a.member, b.member
            ));
        }
    }
    for r in &records {
        if r.holder_at_start.as_deref() != Some(r.member.as_str()) {
            out.push(format!(
                "{} {} started by {} while the lease holder was {:?}",
                r.controller, r.key, r.member, r.holder_at_start
            ));
        }
        if r.outcome != Outcome::Aborted && r.holder_at_end.as_deref() != Some(r.member.as_str()) {
            out.push(format!(
                "{} {} finished by {} while the lease holder was {:?}",
                r.controller, r.key, r.member, r.holder_at_end
            ));
        }
    }
    out
}

/// Where the reconciles went, for an amplification report: counts by controller, outcome and
/// error, the busiest keys (with how many distinct resourceVersions their reconciles saw: a
/// loop reconciles one version over and over), and reconciles per second of the run.
pub(super) fn breakdown(records: &[Record], started: Instant) -> String {
    let mut by_outcome: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_key: BTreeMap<String, (usize, BTreeSet<Option<String>>)> = BTreeMap::new();
    let mut by_second: BTreeMap<u64, usize> = BTreeMap::new();
    for r in records {
        let error: String = r.error.as_deref().unwrap_or("").chars().take(80).collect();
        let outcome = format!("{} {:?} {error}", r.controller, r.outcome);
        *by_outcome.entry(outcome).or_default() += 1;
        let key = by_key
            .entry(format!("{} {}", r.controller, r.key))
            .or_default();
        key.0 += 1;
        key.1.insert(r.seen_rv.clone());
        *by_second
            .entry(r.start.saturating_duration_since(started).as_secs())
            .or_default() += 1;
    }
    let mut busiest: Vec<(String, usize, usize)> = by_key
        .into_iter()
        .map(|(key, (n, versions))| (key, n, versions.len()))
        .collect();
    busiest.sort_by_key(|(_, n, _)| std::cmp::Reverse(*n));
    busiest.truncate(6);
    let busiest: Vec<String> = busiest
        .into_iter()
        .map(|(key, n, versions)| format!("{key}: {n} reconciles of {versions} versions"))
        .collect();
    format!(
        "by outcome {by_outcome:#?}, busiest keys {busiest:#?}, per second of the run {by_second:?}"
    )
}
