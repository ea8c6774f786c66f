//! The Pod printer: `READY` (ready containers / containers, restartable init containers
//! included), `STATUS` (the phase, overridden by a scheduling gate, an init container's state
//! `Init:N/M`, `Init:<reason>`, a container's waiting or terminated reason such as
//! `ContainerCreating`, `CrashLoopBackOff`, `Completed`, `Error`, and `Terminating` once
//! deleted), `RESTARTS` with the time since the last restart, `AGE`, and wide `IP`, `NODE`,
//! `NOMINATED NODE`, `READINESS GATES` (upstream `printPod`).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{AGE, KindPrinter, NAME, Row, text, wide};
use super::format::{arr, has, int, s, s_or};
use super::time::{self, age};

const COLUMNS: &[super::column::Column] = &[
    NAME,
    text(
        "Ready",
        "The aggregate readiness state of this pod for accepting traffic.",
    ),
    text(
        "Status",
        "The aggregate status of the containers in this pod.",
    ),
    text(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    AGE,
    wide("IP", "The IP address allocated to the pod."),
    wide("Node", "The node the pod is scheduled onto."),
    wide(
        "Nominated Node",
        "The node the scheduler nominated for the pod when it preempts others.",
    ),
    wide(
        "Readiness Gates",
        "Readiness gates whose condition is true, of the pod's readiness gates.",
    ),
];

/// The Pod printer.
pub(super) const KINDS: &[KindPrinter] = &[KindPrinter {
    group: "",
    kind: "Pod",
    columns: COLUMNS,
    row,
}];

/// Restart counts and the latest restart, split by whether the container is a restartable
/// (sidecar) init container.
#[derive(Default)]
struct Restarts {
    count: i64,
    last: Option<Timestamp>,
}

impl Restarts {
    fn add(&mut self, status: &Value) {
        self.count += int(status, "/restartCount");
        if let Some(t) = time::parse(status.pointer("/lastState/terminated/finishedAt"))
            && self.last.is_none_or(|l| l < t)
        {
            self.last = Some(t);
        }
    }
}

fn condition_is(pod: &Value, ty: &str, status: &str) -> bool {
    arr(pod, "/status/conditions")
        .iter()
        .find(|c| s(c, "/type") == ty)
        .is_some_and(|c| s(c, "/status") == status)
}

fn is_restartable(init: &[Value], name: &str) -> bool {
    init.iter()
        .any(|c| s(c, "/name") == name && s(c, "/restartPolicy") == "Always")
}

/// `Init:...` while an init container has not completed, else None.
fn init_reason(
    pod: &Value,
    i: usize,
    st: &Value,
    init: &[Value],
    ready: &mut i64,
) -> Option<String> {
    let terminated = st.pointer("/state/terminated").filter(|v| !v.is_null());
    if let Some(t) = terminated
        && int(t, "/exitCode") == 0
    {
        return None;
    }
    if is_restartable(init, s(st, "/name"))
        && st.get("started").and_then(Value::as_bool) == Some(true)
    {
        if st.get("ready").and_then(Value::as_bool) == Some(true) {
            *ready += 1;
        }
        return None;
    }
    if let Some(t) = terminated {
        return Some(match (s(t, "/reason"), int(t, "/signal")) {
            ("", 0) => format!("Init:ExitCode:{}", int(t, "/exitCode")),
            ("", sig) => format!("Init:Signal:{sig}"),
            (r, _) => format!("Init:{r}"),
        });
    }
    let waiting = s(st, "/state/waiting/reason");
    if has(st, "/state/waiting") && !waiting.is_empty() && waiting != "PodInitializing" {
        return Some(format!("Init:{waiting}"));
    }
    Some(format!(
        "Init:{i}/{}",
        arr(pod, "/spec/initContainers").len()
    ))
}

fn row(pod: &Value, now: Timestamp) -> Row {
    let init = arr(pod, "/spec/initContainers");
    let total = arr(pod, "/spec/containers").len() as i64
        + init
            .iter()
            .filter(|c| s(c, "/restartPolicy") == "Always")
            .count() as i64;
    let mut ready = 0i64;
    let phase = s(pod, "/status/phase");
    let mut reason = s_or(pod, "/status/reason", phase).to_string();
    if arr(pod, "/status/conditions")
        .iter()
        .any(|c| s(c, "/type") == "PodScheduled" && s(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let mut all = Restarts::default();
    let mut sidecars = Restarts::default();
    let mut initializing = false;
    for (i, st) in arr(pod, "/status/initContainerStatuses").iter().enumerate() {
        all.add(st);
        if is_restartable(init, s(st, "/name")) {
            sidecars.add(st);
        }
        if let Some(r) = init_reason(pod, i, st, init, &mut ready) {
            reason = r;
            initializing = true;
            break;
        }
    }
    if !initializing || condition_is(pod, "Initialized", "True") {
        all = sidecars;
        let mut running = false;
        for st in arr(pod, "/status/containerStatuses").iter().rev() {
            all.add(st);
            let waiting = s(st, "/state/waiting/reason");
            let terminated = st.pointer("/state/terminated").filter(|v| !v.is_null());
            if has(st, "/state/waiting") && !waiting.is_empty() {
                reason = waiting.to_string();
            } else if let Some(t) = terminated {
                reason = match (s(t, "/reason"), int(t, "/signal")) {
                    ("", 0) => format!("ExitCode:{}", int(t, "/exitCode")),
                    ("", sig) => format!("Signal:{sig}"),
                    (r, _) => r.to_string(),
                };
            } else if st.get("ready").and_then(Value::as_bool) == Some(true)
                && has(st, "/state/running")
            {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_is(pod, "Ready", "True") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let deleting = has(pod, "/metadata/deletionTimestamp");
    if deleting && s(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    let restarts = match all.last {
        Some(t) if all.count != 0 => {
            format!(
                "{} ({} ago)",
                all.count,
                time::human_duration(time::between(t, now))
            )
        }
        _ => all.count.to_string(),
    };
    let gates = arr(pod, "/spec/readinessGates");
    let gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let met = gates
            .iter()
            .filter(|g| {
                arr(pod, "/status/conditions")
                    .iter()
                    .find(|c| s(c, "/type") == s(g, "/conditionType"))
                    .is_some_and(|c| s(c, "/status") == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    let ip = arr(pod, "/status/podIPs")
        .first()
        .map(|p| s(p, "/ip"))
        .filter(|ip| !ip.is_empty())
        .unwrap_or("<none>");
    Row {
        cells: vec![
            json!(s(pod, "/metadata/name")),
            json!(format!("{ready}/{total}")),
            json!(reason),
            json!(restarts),
            json!(age(pod, now)),
            json!(ip),
            json!(s_or(pod, "/spec/nodeName", "<none>")),
            json!(s_or(pod, "/status/nominatedNodeName", "<none>")),
            json!(gates),
        ],
        conditions: match phase {
            "Succeeded" => vec![completed(
                "Succeeded",
                "The pod has completed successfully.",
            )],
            "Failed" => vec![completed("Failed", "The pod failed.")],
            _ => Vec::new(),
        },
    }
}

fn completed(reason: &str, message: &str) -> Value {
    json!({"type": "Completed", "status": "True", "reason": reason, "message": message})
}
