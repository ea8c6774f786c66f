//! The deployment controller: each Deployment owns one ReplicaSet per pod template it has had
//! (the one of its current template is "new", the others "old"). A template change creates
//! a new ReplicaSet (revision = the highest old revision + 1) or revives the old one with
//! that template (as `kubectl rollout undo` asks); a RollingUpdate moves replicas from old to
//! new within `maxSurge`/`maxUnavailable` as pods become available, a Recreate scales the old
//! ones to 0 and starts the new one once their pods are gone; a scale of the Deployment
//! resizes its ReplicaSets (proportionally mid-rollout); a paused Deployment is only scaled;
//! old ReplicaSets beyond `revisionHistoryLimit` are deleted once the rollout is complete;
//! the status is computed from the ReplicaSets. Each step is one pass's writes; the next
//! pass continues from what they made.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::deployment_status::{complete, status};
use super::objects::{
    DEPLOYMENTS, PODS, REPLICASETS, annotation, by_controller, create, delete, int, key_of, list,
    terminal, text, update, write_status,
};
use super::revisions::{
    DESIRED_REPLICAS, REVISION, new_replicaset, new_rs_annotations, resized_annotations, revision,
};
use super::rollout::{Size, fenceposts, new_rs_replicas, old_rs_replicas, proportional};
use super::template_hash::equal_ignoring_hash;
use crate::machinery::meta;
use crate::ops::Part;
use crate::store::State;

/// The field manager of the controllers upstream runs in kube-controller-manager.
pub(super) const MANAGER: &str = "kube-controller-manager";

/// One Deployment's view of the world during a pass.
struct View<'a> {
    d: &'a Value,
    replicas: i64,
    surge: i64,
    unavailable: i64,
    /// Its ReplicaSets, oldest first.
    rss: Vec<&'a Arc<Value>>,
    /// Index of the new ReplicaSet in `rss`.
    new: Option<usize>,
}

/// Desired replicas (`spec.replicas`, 1 when unset).
fn desired(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn size(rs: &Value) -> Size {
    Size {
        replicas: int(rs, "/spec/replicas"),
        available: int(rs, "/status/availableReplicas"),
    }
}

/// One pass over every Deployment; true if anything was written.
pub(super) fn reconcile(st: &mut State) -> bool {
    let deployments = list(st, DEPLOYMENTS);
    let rss = list(st, REPLICASETS);
    let pods = list(st, PODS);
    let owned = by_controller(&rss);
    let pods_of = by_controller(&pods);
    let mut changed = false;
    for d in &deployments {
        let mut mine: Vec<&Arc<Value>> = owned.get(meta::uid(d)).cloned().unwrap_or_default();
        mine.sort_by(|a, b| {
            let created = |o: &Value| text(o, "/metadata/creationTimestamp").to_string();
            created(a)
                .cmp(&created(b))
                .then_with(|| meta::name(a).cmp(meta::name(b)))
        });
        let template = d.pointer("/spec/template").unwrap_or(&Value::Null);
        let new = mine.iter().position(|rs| {
            equal_ignoring_hash(
                rs.pointer("/spec/template").unwrap_or(&Value::Null),
                template,
            )
        });
        let replicas = desired(d);
        let (surge, unavailable) = fenceposts(d, replicas);
        let s = View {
            d,
            replicas,
            surge,
            unavailable,
            rss: mine,
            new,
        };
        changed |= sync(st, &s, &pods_of);
    }
    changed
}

fn sync(st: &mut State, s: &View<'_>, pods_of: &HashMap<&str, Vec<&Arc<Value>>>) -> bool {
    if meta::is_deleting(s.d) {
        return sync_status(st, s);
    }
    let paused = s.d.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);
    let scaling = s.rss.iter().any(|rs| {
        int(rs, "/spec/replicas") > 0
            && annotation(rs, DESIRED_REPLICAS).and_then(|v| v.parse::<i64>().ok())
                != Some(s.replicas)
    });
    if paused || scaling {
        if scale(st, s) {
            return true;
        }
        if paused && cleanup(st, s) {
            return true;
        }
        return sync_status(st, s);
    }
    let recreate = s.d.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate");
    if recreate {
        if scale_old_to_zero(st, s) {
            return true;
        }
        let old_pods_running = s.rss.iter().enumerate().any(|(i, rs)| {
            Some(i) != s.new
                && pods_of
                    .get(meta::uid(rs))
                    .is_some_and(|ps| ps.iter().any(|p| !terminal(p)))
        });
        if old_pods_running {
            return sync_status(st, s);
        }
    }
    let Some(new_idx) = s.new else {
        return create_new(st, s);
    };
    let new = s.rss[new_idx];
    if sync_revisions(st, s, new) {
        return true;
    }
    let target = if recreate || int(new, "/spec/replicas") > s.replicas {
        s.replicas
    } else {
        let all: Vec<Size> = s.rss.iter().map(|rs| size(rs)).collect();
        new_rs_replicas(s.replicas, s.surge, &all, &size(new))
    };
    if resize(st, s, new, target) {
        return true;
    }
    if !recreate && scale_down_old(st, s, new) {
        return true;
    }
    if complete(s.d, s.replicas) && cleanup(st, s) {
        return true;
    }
    sync_status(st, s)
}

/// Writes the status computed from the ReplicaSets.
fn sync_status(st: &mut State, s: &View<'_>) -> bool {
    let new = s.new.map(|i| &**s.rss[i]);
    let all: Vec<&Value> = s.rss.iter().map(|rs| &***rs).collect();
    let want = status(s.d, new, &all, s.replicas, s.unavailable);
    write_status(st, DEPLOYMENTS, MANAGER, s.d, want)
}

/// Sets a ReplicaSet's size (and replica annotations); true if written.
fn resize(st: &mut State, s: &View<'_>, rs: &Value, replicas: i64) -> bool {
    let annotations = resized_annotations(rs, s.replicas, s.surge);
    if int(rs, "/spec/replicas") == replicas && annotations.is_none() {
        return false;
    }
    let mut new = rs.clone();
    new["spec"]["replicas"] = json!(replicas);
    if let Some(a) = annotations {
        meta::metadata_mut(&mut new).insert("annotations".into(), Value::Object(a));
    }
    update(st, REPLICASETS, MANAGER, new, Part::Main)
}

/// The highest revision among the ReplicaSets other than the new one.
fn max_old_revision(s: &View<'_>) -> i64 {
    s.rss
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != s.new)
        .map(|(_, rs)| revision(rs))
        .max()
        .unwrap_or(0)
}

/// Creates the new ReplicaSet (or, when its name is taken by another template, counts a
/// hash collision so that the next pass tries another name).
fn create_new(st: &mut State, s: &View<'_>) -> bool {
    let next = max_old_revision(s) + 1;
    let recreate = s.d.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate");
    let fresh = Size {
        replicas: 0,
        available: 0,
    };
    let mut all: Vec<Size> = s.rss.iter().map(|rs| size(rs)).collect();
    all.push(fresh.clone());
    let start = if recreate {
        s.replicas
    } else {
        new_rs_replicas(s.replicas, s.surge, &all, &fresh)
    };
    let rs = new_replicaset(s.d, next, start, s.replicas, s.surge);
    let taken = st.get(&REPLICASETS, &key_of(&rs)).is_some();
    if taken {
        let mut status = s.d.get("status").cloned().unwrap_or(json!({}));
        status["collisionCount"] = json!(int(s.d, "/status/collisionCount") + 1);
        return write_status(st, DEPLOYMENTS, MANAGER, s.d, status);
    }
    create(st, REPLICASETS, MANAGER, rs).is_some()
}

/// Brings the new ReplicaSet's annotations (revision first) and then the Deployment's
/// revision annotation up to date; true if either was written.
fn sync_revisions(st: &mut State, s: &View<'_>, new: &Value) -> bool {
    let next = max_old_revision(s) + 1;
    if let Some(a) = new_rs_annotations(s.d, new, next, s.replicas, s.surge) {
        let mut rs = new.clone();
        meta::metadata_mut(&mut rs).insert("annotations".into(), Value::Object(a));
        return update(st, REPLICASETS, MANAGER, rs, Part::Main);
    }
    let rev = revision(new).to_string();
    if annotation(s.d, REVISION) == Some(rev.as_str()) {
        return false;
    }
    let mut d = s.d.clone();
    let md = meta::metadata_mut(&mut d);
    let annotations = md.entry("annotations").or_insert_with(|| json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(REVISION.into(), json!(rev));
    }
    update(st, DEPLOYMENTS, MANAGER, d, Part::Main)
}

/// A RollingUpdate's scale-down of the old ReplicaSets, as availability allows.
fn scale_down_old(st: &mut State, s: &View<'_>, new: &Value) -> bool {
    let old: Vec<&Arc<Value>> = s
        .rss
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != s.new)
        .map(|(_, rs)| *rs)
        .collect();
    let sizes: Vec<Size> = old.iter().map(|rs| size(rs)).collect();
    let targets = old_rs_replicas(s.replicas, s.unavailable, &size(new), &sizes);
    let mut changed = false;
    for (rs, target) in old.into_iter().zip(targets) {
        if target != int(rs, "/spec/replicas") {
            changed |= resize(st, s, rs, target);
        }
    }
    changed
}

/// A Recreate's first step: every old ReplicaSet to 0.
fn scale_old_to_zero(st: &mut State, s: &View<'_>) -> bool {
    let mut changed = false;
    for (i, rs) in s.rss.iter().enumerate() {
        if Some(i) != s.new && int(rs, "/spec/replicas") > 0 {
            changed |= resize(st, s, rs, 0);
        }
    }
    changed
}

/// Scaling without a rollout step (the Deployment's replicas changed, or it is paused).
fn scale(st: &mut State, s: &View<'_>) -> bool {
    let active: Vec<usize> = (0..s.rss.len())
        .filter(|i| int(s.rss[*i], "/spec/replicas") > 0)
        .collect();
    // One active ReplicaSet (or none: the new one, else the latest) takes every replica.
    let single = match active.as_slice() {
        [] => s.new.or(s.rss.len().checked_sub(1)),
        [only] => Some(*only),
        _ => None,
    };
    if let Some(i) = single {
        return resize(st, s, s.rss[i], s.replicas);
    }
    // The new ReplicaSet saturated: the old ones go.
    if let Some(n) = s.new {
        let new = s.rss[n];
        let saturated = int(new, "/spec/replicas") == s.replicas
            && int(new, "/status/availableReplicas") == s.replicas;
        if saturated {
            return scale_old_to_zero(st, s);
        }
    }
    // Otherwise share the change in proportion, the new ReplicaSet first.
    let mut order = active;
    order.sort_by_key(|i| (Some(*i) != s.new, -int(s.rss[*i], "/spec/replicas")));
    let sizes: Vec<i64> = order
        .iter()
        .map(|i| int(s.rss[*i], "/spec/replicas"))
        .collect();
    let targets = proportional(s.replicas, s.surge, &sizes);
    let mut changed = false;
    for (i, target) in order.into_iter().zip(targets) {
        changed |= resize(st, s, s.rss[i], target);
    }
    changed
}

/// Deletes the oldest scaled-down ReplicaSets beyond `revisionHistoryLimit`.
fn cleanup(st: &mut State, s: &View<'_>) -> bool {
    let Some(limit) =
        s.d.pointer("/spec/revisionHistoryLimit")
            .and_then(Value::as_i64)
    else {
        return false;
    };
    let mut old: Vec<&Arc<Value>> = s
        .rss
        .iter()
        .enumerate()
        .filter(|(i, rs)| {
            Some(*i) != s.new
                && int(rs, "/spec/replicas") == 0
                && int(rs, "/status/replicas") == 0
                && int(rs, "/status/observedGeneration") >= meta::generation(rs)
                && !meta::is_deleting(rs)
        })
        .map(|(_, rs)| *rs)
        .collect();
    let excess = old.len() as i64 - limit.max(0);
    if excess <= 0 {
        return false;
    }
    old.sort_by_key(|rs| revision(rs));
    let mut changed = false;
    for rs in old.into_iter().take(excess as usize) {
        changed |= delete(st, REPLICASETS, rs);
    }
    changed
}
