//! `POST pods/<name>/eviction`: deletes a pod unless that would break its
//! PodDisruptionBudget, as upstream's eviction handler decides: a pod that is pending,
//! finished or already being deleted goes at once; otherwise its one matching budget must
//! be processed (`status.observedGeneration`) and allow a disruption, which the eviction
//! spends (`disruptionsAllowed`, `disruptedPods`, as `kube-apiserver` writes the budget's
//! status); 429 when it does not, 500 for a pod with several budgets.

use std::sync::Arc;

use http::{Method, Response};
use serde_json::{Value, json};

use super::{Target, created, posted};
use crate::http::respond::Body;
use crate::machinery::meta;
use crate::machinery::pointer::text;
use crate::machinery::query::{ListOptions, Query};
use crate::machinery::selector::LabelSelector;
use crate::machinery::status::{ApiError, ApiResult, Cause};
use crate::ops::{self, DeleteOptions, Ownership, Part, WriteOptions};
use crate::store::State;

/// Upstream's message for every refusal by a budget.
const REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// Evicts the pod `at`.
pub(super) fn evict(
    st: &mut State,
    at: &Target<'_>,
    method: &Method,
    query: &Query,
    body: &[u8],
) -> ApiResult<Response<Body>> {
    let (eviction, query_dry_run) = posted(
        at,
        method,
        query,
        body,
        "Eviction",
        &["policy/v1", "policy/v1beta1"],
    )?;
    let options = eviction.get("deleteOptions").cloned().unwrap_or(json!({}));
    let options = serde_json::to_vec(&options).map_err(ApiError::internal)?;
    let mut opts = DeleteOptions::parse(&options, &Query::default())?;
    // The request's dry run counts when the eviction's options name none.
    opts.dry_run |= query_dry_run;
    let pod = at.pod(st)?;
    let phase = text(&pod, "/status/phase");
    let terminal = matches!(phase, "Succeeded" | "Failed") || meta::is_deleting(&pod);
    if terminal || phase == "Pending" {
        // Not racing a pod that becomes ready: the version read is the one deleted.
        if !terminal && opts.precondition_rv.is_none() {
            opts.precondition_rv = Some(meta::resource_version(&pod).to_string());
        }
        return delete(st, at, &opts);
    }
    let budgets = budgets_of(st, &pod, at.ns);
    let budget = match budgets.as_slice() {
        [] => return delete(st, at, &opts),
        [one] => one,
        _ => {
            return Err(ApiError::new(
                500,
                "",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
    };
    let int = |p: &str| budget.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let ready = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let always_allow =
        budget.pointer("/spec/unhealthyPodEvictionPolicy") == Some(&json!("AlwaysAllow"));
    let healthy_enough = int("/status/currentHealthy") >= int("/status/desiredHealthy")
        && int("/status/desiredHealthy") > 0;
    if !ready && (always_allow || healthy_enough) {
        // An unready pod does not count as healthy: nothing to spend.
        if opts.precondition_rv.is_none() {
            opts.precondition_rv = Some(meta::resource_version(&pod).to_string());
        }
        return delete(st, at, &opts);
    }
    spend(st, at, budget, opts.dry_run)?;
    delete(st, at, &opts)
}

/// The budgets in `ns` whose (valid, non-empty) selector matches the pod's labels.
fn budgets_of(st: &State, pod: &Value, ns: &str) -> Vec<Arc<Value>> {
    let Some(info) = st.lookup("policy", "v1", "poddisruptionbudgets") else {
        return Vec::new();
    };
    let Ok(page) = st.list(&info.key(), Some(ns), &ListOptions::default()) else {
        return Vec::new();
    };
    page.items
        .into_iter()
        .map(|s| s.obj)
        .filter(|b| {
            b.pointer("/spec/selector")
                .and_then(LabelSelector::from_object)
                .is_some_and(|sel| !sel.is_empty() && sel.matches(pod))
        })
        .collect()
}

fn too_many(cause: String, retry_after: Option<u64>) -> ApiError {
    let mut e = ApiError::new(429, "TooManyRequests", REFUSED);
    e.details.causes.push(Cause {
        reason: "DisruptionBudget".into(),
        message: cause,
        field: String::new(),
    });
    e.details.retry_after = retry_after;
    e
}

/// Spends one disruption of `budget` for the pod, or refuses as upstream does.
fn spend(st: &mut State, at: &Target<'_>, budget: &Value, dry_run: bool) -> ApiResult<()> {
    let name = meta::name(budget);
    let int = |p: &str| budget.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    if int("/status/observedGeneration") < meta::generation(budget) {
        return Err(too_many(
            format!("The disruption budget {name} is still being processed by the server."),
            Some(10),
        ));
    }
    let allowed = int("/status/disruptionsAllowed");
    let forbidden = |why: &str| ApiError::forbidden_on("policy", "poddisruptionbudget", name, why);
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    let disrupted = budget
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
        .map_or(0, |m| m.len());
    if disrupted > 2000 {
        return Err(forbidden(
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(too_many(
            format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                int("/status/desiredHealthy"),
                int("/status/currentHealthy")
            ),
            None,
        ));
    }
    if dry_run {
        return Ok(());
    }
    let mut new = budget.clone();
    let now = meta::now_rfc3339();
    let observed = int("/status/observedGeneration");
    if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
        status.insert("disruptionsAllowed".into(), json!(allowed - 1));
        let pods = status.entry("disruptedPods").or_insert_with(|| json!({}));
        if let Some(pods) = pods.as_object_mut() {
            pods.insert(at.name.to_string(), json!(now));
        }
        if allowed - 1 == 0 {
            set_insufficient(status, observed, &now);
        }
    }
    let Some(info) = st.lookup("policy", "v1", "poddisruptionbudgets") else {
        return Ok(());
    };
    let opts = WriteOptions {
        field_manager: "kube-apiserver".into(),
        ownership: Ownership::Record,
        subresource: "status",
        ..WriteOptions::default()
    };
    ops::update(st, &info, "v1", Some(at.ns), name, new, Part::Status, &opts)?;
    Ok(())
}

/// The budget's `DisruptionAllowed` condition set to `False` (`InsufficientPods`), its
/// transition time kept unless its status changes.
fn set_insufficient(status: &mut serde_json::Map<String, Value>, observed: i64, now: &str) {
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let wanted = json!({"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
        "message": "", "observedGeneration": observed, "lastTransitionTime": now});
    match list.iter_mut().find(|c| c["type"] == "DisruptionAllowed") {
        Some(c) => {
            let kept = (c["status"] == "False").then(|| c["lastTransitionTime"].clone());
            *c = wanted;
            if let Some(t) = kept {
                c["lastTransitionTime"] = t;
            }
        }
        None => list.push(wanted),
    }
}

/// Deletes the pod as a DELETE with `opts` would; 201 with a success `Status`.
fn delete(st: &mut State, at: &Target<'_>, opts: &DeleteOptions) -> ApiResult<Response<Body>> {
    ops::delete(st, at.pods, at.ns, at.name, opts)?;
    Ok(created())
}
