//! Workload simulator (optional, off by default): Deployments get the status a cluster
//! would give them once their pods were running. A short, configurable delay after a
//! Deployment's spec (generation) or replica count changes, its status is written through
//! the normal status-write path (so watchers see MODIFIED and the resourceVersion moves):
//! `observedGeneration`, `replicas`, `updatedReplicas`, `readyReplicas` and
//! `availableReplicas` converge to the spec, and the `Available` and `Progressing`
//! conditions are True. A status that already matches is never rewritten.
//!
//! The task follows the deployments' live events; it holds the store lock only for
//! synchronous reads and writes, never across an await, and stops on shutdown.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::api::meta;
use crate::kinds::resource_info::GroupResource;
use crate::ops::WriteOptions;
use crate::ops::{Part, update};
use crate::shared::Shared;
use crate::store::{EventType, ObjKey, State};

/// What a pending status write was scheduled for: the deployment's uid, generation and
/// desired replicas; a change of any of them restarts the delay.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    uid: String,
    generation: i64,
    replicas: i64,
}

fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}

/// Desired replicas: `spec.replicas`, 1 when unset (as upstream defaults it).
fn desired_replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn target(obj: &Value) -> Target {
    Target {
        uid: meta::uid(obj).to_string(),
        generation: meta::generation(obj),
        replicas: desired_replicas(obj),
    }
}

/// The status of `cond_type` in the conditions list, with its reason.
fn condition<'a>(status: &'a Value, cond_type: &str) -> Option<&'a Map<String, Value>> {
    status
        .get("conditions")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_object)
        .find(|c| c.get("type").and_then(Value::as_str) == Some(cond_type))
}

fn condition_true(status: &Value, cond_type: &str, reason: &str) -> bool {
    condition(status, cond_type).is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some("True")
            && c.get("reason").and_then(Value::as_str) == Some(reason)
    })
}

/// True if the deployment's status already is what the simulator would write.
fn converged(obj: &Value) -> bool {
    let Some(status) = obj.get("status") else {
        return false;
    };
    let want = desired_replicas(obj);
    let num = |f: &str| status.get(f).and_then(Value::as_i64);
    num("observedGeneration") == Some(meta::generation(obj))
        && [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
        ]
        .iter()
        .all(|f| num(f) == Some(want))
        && status.get("unavailableReplicas").is_none()
        && condition_true(status, "Available", "MinimumReplicasAvailable")
        && condition_true(status, "Progressing", "NewReplicaSetAvailable")
}

/// One condition; an existing True condition keeps its lastTransitionTime.
fn new_condition(old: &Value, cond_type: &str, reason: &str, message: &str, now: &str) -> Value {
    let transition = condition(old, cond_type)
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .unwrap_or(now)
        .to_string();
    json!({
        "type": cond_type,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastUpdateTime": now,
        "lastTransitionTime": transition,
    })
}

/// The converged status of a deployment.
fn converged_status(obj: &Value) -> Value {
    let replicas = desired_replicas(obj);
    let old = obj.get("status").cloned().unwrap_or(Value::Null);
    let now = meta::now_rfc3339();
    let name = meta::name(obj);
    json!({
        "observedGeneration": meta::generation(obj),
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            new_condition(&old, "Available", "MinimumReplicasAvailable",
                "Deployment has minimum availability.", &now),
            new_condition(&old, "Progressing", "NewReplicaSetAvailable",
                &format!("ReplicaSet \"{name}\" has successfully progressed."), &now),
        ],
    })
}

/// Pending status writes, each due at an instant.
struct Pending {
    delay: Duration,
    due: HashMap<ObjKey, (Target, Instant)>,
}

impl Pending {
    /// Schedules (or keeps, or drops) the write for one deployment's current state.
    fn observe(&mut self, key: ObjKey, obj: &Value, now: Instant) {
        if meta::is_deleting(obj) || converged(obj) {
            self.due.remove(&key);
            return;
        }
        let t = target(obj);
        match self.due.get(&key) {
            Some((old, _)) if *old == t => {}
            _ => {
                self.due.insert(key, (t, now + self.delay));
            }
        }
    }

    /// Re-reads every deployment (at start and after missed events).
    fn rescan(&mut self, st: &State, now: Instant) {
        let Some(rs) = st.resource(&deployments()) else {
            self.due.clear();
            return;
        };
        self.due.retain(|k, _| rs.objects.contains_key(k));
        let objs: Vec<_> = rs
            .objects
            .iter()
            .map(|(k, v)| (k.clone(), v.obj.clone()))
            .collect();
        for (k, obj) in objs {
            self.observe(k, &obj, now);
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.due.values().map(|(_, at)| *at).min()
    }

    /// Writes the status of every deployment whose delay has passed and whose state is
    /// still the one the write was scheduled for.
    fn write_due(&mut self, st: &mut State, now: Instant) {
        let ready: Vec<(ObjKey, Target)> = self
            .due
            .iter()
            .filter(|(_, (_, at))| *at <= now)
            .map(|(k, (t, _))| (k.clone(), t.clone()))
            .collect();
        let key = deployments();
        let Some(info) = st.resource(&key).map(|r| r.info.clone()) else {
            return;
        };
        for (okey, t) in ready {
            self.due.remove(&okey);
            let Some(obj) = st.get(&key, &okey) else {
                continue;
            };
            if meta::is_deleting(&obj) || converged(&obj) || target(&obj) != t {
                // Changed since it was scheduled: its own event reschedules it.
                continue;
            }
            let mut body = (*obj).clone();
            if let Some(m) = body.as_object_mut() {
                m.insert("status".into(), converged_status(&obj));
            }
            let version = obj
                .get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|av| av.split_once('/'))
                .map_or("v1", |(_, v)| v)
                .to_string();
            if let Err(e) = update(
                st,
                &info,
                &version,
                Some(&okey.0),
                &okey.1,
                body,
                Part::Status,
                &WriteOptions::default(),
            ) {
                tracing::warn!(namespace = %okey.0, name = %okey.1, error = ?e,
                    "workload simulator: status write failed");
            }
        }
    }
}

/// The simulator task: follows deployment events and writes converged status `delay`
/// after each change, until shutdown.
pub(crate) async fn run(shared: Arc<Shared>, delay: Duration) {
    let mut shutdown = shared.shutdown.subscribe();
    if *shutdown.borrow() {
        return;
    }
    let mut pending = Pending {
        delay,
        due: HashMap::new(),
    };
    let mut events = {
        let st = shared.state.lock();
        let Some(rx) = st.subscribe(&deployments()) else {
            return;
        };
        pending.rescan(&st, Instant::now());
        rx
    };
    loop {
        let sleep = pending.next_due();
        tokio::select! {
            () = crate::shared::shutting_down(&mut shutdown) => return,
            ev = events.recv() => match ev {
                Ok(ev) => {
                    let key = (meta::namespace(&ev.obj).to_string(), meta::name(&ev.obj).to_string());
                    if ev.kind == EventType::Deleted {
                        pending.due.remove(&key);
                    } else {
                        pending.observe(key, &ev.obj, Instant::now());
                    }
                }
                Err(RecvError::Lagged(_)) => pending.rescan(&shared.state.lock(), Instant::now()),
                Err(RecvError::Closed) => return,
            },
            _ = async {
                match sleep {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => pending.write_due(&mut shared.state.lock(), Instant::now()),
        }
    }
}
