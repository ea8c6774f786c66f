//! The job controller (NonIndexed jobs): a Job runs up to `parallelism` pods at a time, named
//! `<job>-<5 letters>`, owned by it and carrying the `batch.kubernetes.io/job-tracking`
//! finalizer, until `completions` of them succeeded (with no `completions`: until one
//! succeeded and none is left running). A finished pod is counted once (its finalizer is
//! removed as it is counted). The status carries `startTime`, `active`, `ready`,
//! `terminating`, `succeeded`, `failed` and `uncountedTerminatedPods` as upstream writes them;
//! once enough pods succeeded the Job gets `SuccessCriteriaMet`, and once none is left
//! running `Complete` and `completionTime`. Suspended and finished Jobs start no pods; a
//! suspended Job has the `Suspended` condition (`False`, `JobResumed`, once resumed).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::deployments::MANAGER;
use super::objects::{
    JOBS, PODS, active, by_controller, condition, condition_true, create, int, list, phase,
    terminal, update, write_status,
};
use super::replicasets::{BURST, pod_from_template};
use crate::machinery::meta;
use crate::ops::Part;
use crate::store::State;

/// The finalizer that keeps a Job's pod until the Job counted it.
const TRACKING: &str = "batch.kubernetes.io/job-tracking";

/// Why a Job succeeded, in both of its success conditions.
const REASON: &str = "CompletionsReached";
const MESSAGE: &str = "Reached expected number of succeeded pods";

/// One pass over every Job; true if anything was written.
pub(super) fn reconcile(st: &mut State) -> bool {
    let jobs = list(st, JOBS);
    let pods = list(st, PODS);
    let pods_of = by_controller(&pods);
    let mut changed = false;
    for job in &jobs {
        let mine = pods_of.get(meta::uid(job)).cloned().unwrap_or_default();
        changed |= sync(st, job, &mine);
    }
    changed
}

/// Removes the tracking finalizer of every finished (or deleted) pod; the number of those
/// that succeeded and of those that did not.
fn count_finished(st: &mut State, pods: &[&Arc<Value>]) -> (i64, i64) {
    let (mut succeeded, mut failed) = (0, 0);
    for pod in pods {
        let mut fins = meta::finalizers(pod);
        if !(terminal(pod) || meta::is_deleting(pod)) || !fins.iter().any(|f| f == TRACKING) {
            continue;
        }
        fins.retain(|f| f != TRACKING);
        let mut new = (***pod).clone();
        meta::set_finalizers(&mut new, fins);
        if update(st, PODS, MANAGER, new, Part::Main) {
            if phase(pod) == "Succeeded" {
                succeeded += 1;
            } else {
                failed += 1;
            }
        }
    }
    (succeeded, failed)
}

/// A Job condition, True since now (or since it first was).
fn true_condition(job: &Value, ty: &str, now: &str) -> Value {
    if let Some(c) = condition(job, ty) {
        return Value::Object(c.clone());
    }
    json!({"type": ty, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
        "reason": REASON, "message": MESSAGE})
}

fn sync(st: &mut State, job: &Value, pods: &[&Arc<Value>]) -> bool {
    let (new_succeeded, new_failed) = count_finished(st, pods);
    let suspended = job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    let finished = condition_true(job, "Complete") || condition_true(job, "Failed");
    if meta::is_deleting(job) || finished {
        return new_succeeded + new_failed > 0;
    }
    let now = meta::now_rfc3339();
    if suspended {
        return write_status(st, JOBS, MANAGER, job, suspended_status(job, pods, &now))
            || new_succeeded + new_failed > 0;
    }
    let running: Vec<&&Arc<Value>> = pods.iter().filter(|p| active(p)).collect();
    let mut active_count = running.len() as i64;
    let ready = running
        .iter()
        .filter(|p| condition_true(p, "Ready"))
        .count();
    let terminating = pods
        .iter()
        .filter(|p| meta::is_deleting(p) && !terminal(p))
        .count();
    let succeeded = int(job, "/status/succeeded") + new_succeeded;
    let failed = int(job, "/status/failed") + new_failed;
    let completions = job.pointer("/spec/completions").and_then(Value::as_i64);
    let parallelism = job
        .pointer("/spec/parallelism")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let done = match completions {
        Some(c) => succeeded >= c,
        None => succeeded > 0 && active_count == 0,
    };
    let mut created = false;
    if !done {
        let want = match completions {
            Some(c) => parallelism.min(c - succeeded),
            None if succeeded > 0 => 0,
            None => parallelism,
        };
        let missing = (want - active_count).clamp(0, BURST as i64);
        for _ in 0..missing {
            let pod = pod_from_template(
                job,
                "batch/v1",
                "Job",
                &format!("{}-", meta::name(job)),
                &[TRACKING],
            );
            if create(st, PODS, MANAGER, pod).is_some() {
                active_count += 1;
                created = true;
            }
        }
    }
    let old = job
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut s = Map::new();
    let start = old.get("startTime").cloned().unwrap_or_else(|| json!(now));
    s.insert("startTime".into(), start);
    for (k, n) in [
        ("active", active_count),
        ("succeeded", succeeded),
        ("failed", failed),
    ] {
        if n > 0 {
            s.insert(k.into(), json!(n));
        }
    }
    s.insert("ready".into(), json!(ready));
    s.insert("terminating".into(), json!(terminating));
    s.insert("uncountedTerminatedPods".into(), json!({}));
    let mut conds: Vec<Value> = condition(job, "Suspended")
        .map(|_| suspension(job, "False", "JobResumed", "Job resumed", &now))
        .into_iter()
        .collect();
    if done {
        conds.push(true_condition(job, "SuccessCriteriaMet", &now));
        if active_count == 0 && terminating == 0 {
            conds.push(true_condition(job, "Complete", &now));
            s.insert("completionTime".into(), json!(now));
        }
    }
    if !conds.is_empty() {
        s.insert("conditions".into(), Value::Array(conds));
    }
    write_status(st, JOBS, MANAGER, job, Value::Object(s))
        || created
        || new_succeeded + new_failed > 0
}

/// The `Suspended` condition with this status (its times kept while the status is unchanged).
fn suspension(job: &Value, status: &str, reason: &str, message: &str, now: &str) -> Value {
    let since = condition(job, "Suspended")
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(now));
    json!({"type": "Suspended", "status": status, "lastProbeTime": since,
        "lastTransitionTime": since, "reason": reason, "message": message})
}

/// The status of a suspended Job: no start time, the `Suspended` condition, its pods counted.
fn suspended_status(job: &Value, pods: &[&Arc<Value>], now: &str) -> Value {
    let running = pods.iter().filter(|p| active(p)).count();
    let terminating = pods
        .iter()
        .filter(|p| meta::is_deleting(p) && !terminal(p))
        .count();
    let mut s = Map::new();
    if running > 0 {
        s.insert("active".into(), json!(running));
    }
    s.insert("ready".into(), json!(0));
    s.insert("terminating".into(), json!(terminating));
    s.insert("uncountedTerminatedPods".into(), json!({}));
    s.insert(
        "conditions".into(),
        json!([suspension(
            job,
            "True",
            "JobSuspended",
            "Job suspended",
            now
        )]),
    );
    Value::Object(s)
}
