//! The scheduler and the kubelet of the simulated node. The scheduler binds every pending,
//! unscheduled pod to the node (`spec.nodeName`, `PodScheduled`). The kubelet runs the pods
//! bound to it: at once their containers are being created; `delay` later they run and are
//! ready with a pod IP; a pod whose `restartPolicy` is `Never` or `OnFailure` (a batch pod)
//! then exits 0 after another `delay` (`Succeeded`), while `Always` pods run until deleted. A
//! pod being deleted is stopped and removed `delay` after its deletion began (as a kubelet
//! ends a graceful deletion once its containers stopped).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::node::{NODE_IP, NODE_NAME};
use super::objects::{NODES, PODS, key_of, list, phase, terminal, text, write_status};
use super::pod_status::{Placement, creating, running, succeeded};
use crate::machinery::meta;
use crate::store::State;

/// The field manager of the node's kubelet.
const KUBELET: &str = "kubelet";

/// What the kubelet does next to a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Start,
    Finish,
    Stop,
}

/// When each pod's next step is due.
#[derive(Debug)]
pub(super) struct Timers {
    delay: Duration,
    due: HashMap<String, (Step, Instant)>,
}

impl Timers {
    /// No step scheduled yet; each step comes `delay` after the previous one.
    pub(super) fn new(delay: Duration) -> Self {
        Self {
            delay,
            due: HashMap::new(),
        }
    }

    /// Whether `step` of pod `uid` is due (it is then unscheduled: a step that could not be
    /// taken is tried again a delay later); schedules it when it is not yet scheduled.
    fn ready(&mut self, uid: &str, step: Step, now: Instant) -> bool {
        match self.due.get(uid) {
            Some((s, at)) if *s == step => {
                let due = *at <= now;
                if due {
                    self.due.remove(uid);
                }
                due
            }
            _ => {
                self.due.insert(uid.to_string(), (step, now + self.delay));
                false
            }
        }
    }

    /// The next instant a step is due.
    pub(super) fn next(&self) -> Option<Instant> {
        self.due.values().map(|(_, at)| *at).min()
    }
}

/// The pod IPs in use (of every pod not finished).
fn ips_in_use(pods: &[std::sync::Arc<Value>]) -> HashSet<String> {
    pods.iter()
        .filter(|p| !terminal(p))
        .map(|p| text(p, "/status/podIP").to_string())
        .filter(|ip| !ip.is_empty())
        .collect()
}

/// The first free address of the node's pod range (its podCIDR 10.244.0.0/24, from
/// 10.244.0.2); None when every one is taken (the pod then waits, as for a full node).
fn free_ip(used: &HashSet<String>) -> Option<String> {
    (2u32..255)
        .map(|n| format!("10.244.0.{n}"))
        .find(|ip| !used.contains(ip))
}

/// Whether the node exists and is not being deleted.
fn node_up(st: &State) -> bool {
    st.get(&NODES, &(String::new(), NODE_NAME.to_string()))
        .is_some_and(|n| !meta::is_deleting(&n))
}

/// One pass of the scheduler and the kubelet; true if anything was written.
pub(super) fn reconcile(st: &mut State, timers: &mut Timers, now: Instant) -> bool {
    let pods = list(st, PODS);
    let mut used = ips_in_use(&pods);
    let up = node_up(st);
    let mut seen = HashSet::new();
    let mut changed = false;
    for pod in &pods {
        let uid = meta::uid(pod).to_string();
        let node = text(pod, "/spec/nodeName");
        if node.is_empty() {
            if up && !meta::is_deleting(pod) && !terminal(pod) {
                changed |= bind(st, pod);
            }
            continue;
        }
        if node != NODE_NAME {
            continue;
        }
        seen.insert(uid.clone());
        if meta::is_deleting(pod) {
            if timers.ready(&uid, Step::Stop, now) {
                changed |= remove(st, pod);
            }
            continue;
        }
        let restart = text(pod, "/spec/restartPolicy");
        let batch = restart == "Never" || restart == "OnFailure";
        let has_statuses = pod.pointer("/status/containerStatuses").is_some();
        match phase(pod) {
            "Pending" | "" if !has_statuses => {
                let at = Placement {
                    host_ip: NODE_IP,
                    pod_ip: "",
                };
                changed |= write_status(st, PODS, KUBELET, pod, creating(pod, &at));
                timers.ready(&uid, Step::Start, now);
            }
            "Pending" | "" => {
                if timers.ready(&uid, Step::Start, now) {
                    let Some(ip) = free_ip(&used) else { continue };
                    used.insert(ip.clone());
                    let at = Placement {
                        host_ip: NODE_IP,
                        pod_ip: &ip,
                    };
                    changed |= write_status(st, PODS, KUBELET, pod, running(pod, &at));
                }
            }
            "Running" if batch => {
                if timers.ready(&uid, Step::Finish, now) {
                    let ip = text(pod, "/status/podIP").to_string();
                    let at = Placement {
                        host_ip: NODE_IP,
                        pod_ip: &ip,
                    };
                    changed |= write_status(st, PODS, KUBELET, pod, succeeded(pod, &at));
                }
            }
            _ => {
                timers.due.remove(&uid);
            }
        }
    }
    timers.due.retain(|uid, _| seen.contains(uid));
    changed
}

/// Binds a pod to the node, as the scheduler's binding does: `spec.nodeName` and the
/// `PodScheduled` condition in one write.
fn bind(st: &mut State, pod: &Value) -> bool {
    let mut new = pod.clone();
    new["spec"]["nodeName"] = json!(NODE_NAME);
    let now = meta::now_rfc3339();
    let status = new
        .as_object_mut()
        .map(|m| m.entry("status").or_insert_with(|| json!({})));
    if let Some(status) = status.and_then(Value::as_object_mut) {
        let conds = status.entry("conditions").or_insert_with(|| json!([]));
        if let Some(list) = conds.as_array_mut() {
            list.retain(|c| c["type"] != "PodScheduled");
            list.push(json!({"type": "PodScheduled", "status": "True",
                "lastProbeTime": null, "lastTransitionTime": now}));
        }
    }
    st.put(&PODS, new);
    true
}

/// Ends a pod's graceful deletion: its grace period is over; with no finalizers left it
/// is removed, otherwise it stays until they are (as after a delete with grace period 0).
fn remove(st: &mut State, pod: &Value) -> bool {
    if meta::finalizers(pod).is_empty() {
        return st.remove(&PODS, &key_of(pod)).is_some();
    }
    if meta::field(pod, "deletionGracePeriodSeconds").and_then(Value::as_i64) == Some(0) {
        return false;
    }
    let mut new = pod.clone();
    meta::metadata_mut(&mut new).insert("deletionGracePeriodSeconds".into(), json!(0));
    st.put(&PODS, new);
    true
}
