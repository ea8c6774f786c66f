//! The statuses a kubelet writes for a pod it runs, in the shape a containerd node gives
//! them: containers being created (`Pending`, `ContainerCreating`), running and ready
//! (`Running`, every condition True, a pod IP, container IDs and resolved image names), and
//! finished (`Succeeded`, exit code 0, reason `Completed`).

use serde_json::{Value, json};

use crate::machinery::meta;

/// Where a pod runs: its node's IP and its own.
pub(super) struct Placement<'a> {
    /// The node's InternalIP.
    pub host_ip: &'a str,
    /// The pod's IP.
    pub pod_ip: &'a str,
}

/// An image reference as containerd reports it: registry and `library/` made explicit, and
/// `:latest` when it names no tag or digest (`nginx` → `docker.io/library/nginx:latest`).
pub(super) fn resolved_image(image: &str) -> String {
    let (first, _) = image.split_once('/').unwrap_or(("", image));
    let has_registry = first.contains('.') || first.contains(':') || first == "localhost";
    let mut out = if has_registry {
        image.to_string()
    } else if image.contains('/') {
        format!("docker.io/{image}")
    } else {
        format!("docker.io/library/{image}")
    };
    let last = out.rsplit('/').next().unwrap_or_default();
    if !out.contains('@') && !last.contains(':') {
        out.push_str(":latest");
    }
    out
}

/// 64 hex digits derived from `seed` (stable for the same seed).
fn digest_hex(seed: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, seed.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The image ID a registry would give the resolved image (`docker.io/library/nginx@sha256:…`).
fn image_id(image: &str) -> String {
    let resolved = resolved_image(image);
    let repo = resolved
        .split_once('@')
        .map(|(r, _)| r.to_string())
        .unwrap_or_else(|| match resolved.rsplit_once(':') {
            Some((r, tag)) if !tag.contains('/') => r.to_string(),
            _ => resolved.clone(),
        });
    format!("{repo}@sha256:{}", digest_hex(&resolved))
}

/// The containers of a pod spec list: (name, image).
fn containers<'a>(pod: &'a Value, list: &str) -> Vec<(&'a str, &'a str)> {
    pod.pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
            (s("name"), s("image"))
        })
        .collect()
}

fn container_id(pod: &Value, name: &str) -> String {
    format!(
        "containerd://{}",
        digest_hex(&format!("{}/{name}", meta::uid(pod)))
    )
}

/// A pod condition.
fn cond(ty: &str, status: bool, reason: Option<&str>, at: &str) -> Value {
    let mut c = json!({"type": ty, "status": if status { "True" } else { "False" },
        "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    c
}

/// The `PodScheduled` condition the binding wrote (or a new one).
fn scheduled(pod: &Value, now: &str) -> Value {
    super::objects::condition(pod, "PodScheduled")
        .map(|c| Value::Object(c.clone()))
        .unwrap_or_else(|| cond("PodScheduled", true, None, now))
}

/// The status fields every kubelet status has.
fn base(pod: &Value, phase: &str, at: &Placement<'_>, now: &str) -> Value {
    let start = pod
        .pointer("/status/startTime")
        .and_then(Value::as_str)
        .unwrap_or(now);
    let mut s = json!({
        "phase": phase,
        "hostIP": at.host_ip,
        "hostIPs": [{"ip": at.host_ip}],
        "startTime": start,
    });
    if !at.pod_ip.is_empty() {
        s["podIP"] = json!(at.pod_ip);
        s["podIPs"] = json!([{"ip": at.pod_ip}]);
    }
    if let Some(q) = pod.pointer("/status/qosClass") {
        s["qosClass"] = q.clone();
    }
    s
}

/// Containers being created.
pub(super) fn creating(pod: &Value, at: &Placement<'_>) -> Value {
    let now = meta::now_rfc3339();
    let mut s = base(pod, "Pending", at, &now);
    let names: Vec<&str> = containers(pod, "containers")
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let msg = format!("containers with unready status: [{}]", names.join(" "));
    let mut ready = cond("Ready", false, Some("ContainersNotReady"), &now);
    ready["message"] = json!(msg);
    let mut containers_ready = cond("ContainersReady", false, Some("ContainersNotReady"), &now);
    containers_ready["message"] = json!(msg);
    s["conditions"] = json!([
        cond("PodReadyToStartContainers", false, None, &now),
        cond("Initialized", true, None, &now),
        ready,
        containers_ready,
        scheduled(pod, &now),
    ]);
    s["containerStatuses"] = containers(pod, "containers")
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "",
            "ready": false, "started": false, "restartCount": 0, "lastState": {},
            "state": {"waiting": {"reason": "ContainerCreating"}}})
        })
        .collect();
    s
}

/// The status of a container that started, in `state`.
fn started_container(pod: &Value, name: &str, image: &str, ready: bool, state: Value) -> Value {
    let running = state.get("running").is_some();
    json!({"name": name, "image": resolved_image(image), "imageID": image_id(image),
        "containerID": container_id(pod, name), "ready": ready, "started": running,
        "restartCount": 0, "lastState": {}, "state": state})
}

/// The state of a container that exited 0.
fn exited(pod: &Value, name: &str, started_at: &Value, now: &str) -> Value {
    json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started_at,
        "finishedAt": now, "containerID": container_id(pod, name)}})
}

/// The conditions of a pod whose containers started: running and ready (`done` false), or
/// all exited (`done` true, reason `PodCompleted`).
fn started_conditions(pod: &Value, done: bool, now: &str) -> Value {
    let reason = done.then_some("PodCompleted");
    json!([
        cond("PodReadyToStartContainers", !done, None, now),
        cond("Initialized", true, reason, now),
        cond("Ready", !done, reason, now),
        cond("ContainersReady", !done, reason, now),
        scheduled(pod, now),
    ])
}

/// Init containers, finished.
fn init_statuses(pod: &Value, now: &str) -> Option<Value> {
    let inits = containers(pod, "initContainers");
    (!inits.is_empty()).then(|| {
        inits
            .into_iter()
            .map(|(name, image)| {
                let state = exited(pod, name, &json!(now), now);
                started_container(pod, name, image, true, state)
            })
            .collect()
    })
}

/// Every container running and ready.
pub(super) fn running(pod: &Value, at: &Placement<'_>) -> Value {
    let now = meta::now_rfc3339();
    let mut s = base(pod, "Running", at, &now);
    s["conditions"] = started_conditions(pod, false, &now);
    if let Some(inits) = init_statuses(pod, &now) {
        s["initContainerStatuses"] = inits;
    }
    s["containerStatuses"] = containers(pod, "containers")
        .into_iter()
        .map(|(name, image)| {
            let state = json!({"running": {"startedAt": now}});
            started_container(pod, name, image, true, state)
        })
        .collect();
    s
}

/// Every container exited 0.
pub(super) fn succeeded(pod: &Value, at: &Placement<'_>) -> Value {
    let now = meta::now_rfc3339();
    let mut s = base(pod, "Succeeded", at, &now);
    s["conditions"] = started_conditions(pod, true, &now);
    if let Some(inits) = init_statuses(pod, &now) {
        s["initContainerStatuses"] = inits;
    }
    s["containerStatuses"] = containers(pod, "containers")
        .into_iter()
        .map(|(name, image)| {
            let started = pod
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|c| c["name"] == name))
                .and_then(|c| c.pointer("/state/running/startedAt"))
                .cloned()
                .unwrap_or_else(|| json!(now));
            started_container(pod, name, image, false, exited(pod, name, &started, &now))
        })
        .collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_resolve_as_containerd_reports_them() {
        for (image, want) in [
            ("nginx", "docker.io/library/nginx:latest"),
            ("nginx:1.27", "docker.io/library/nginx:1.27"),
            ("bitnami/redis", "docker.io/bitnami/redis:latest"),
            ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
            ("localhost:5000/app", "localhost:5000/app:latest"),
        ] {
            assert_eq!(resolved_image(image), want, "{image}");
        }
        assert!(image_id("nginx:1.27").starts_with("docker.io/library/nginx@sha256:"));
    }

    #[test]
    fn a_running_pod_is_ready_with_its_ip() {
        let pod = json!({"metadata": {"uid": "u"}, "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            "status": {"phase": "Pending", "qosClass": "BestEffort"}});
        let at = Placement {
            host_ip: "172.18.0.2",
            pod_ip: "10.244.0.5",
        };
        let s = running(&pod, &at);
        assert_eq!(s["phase"], "Running");
        assert_eq!(s["podIP"], "10.244.0.5");
        assert_eq!(s["qosClass"], "BestEffort");
        let ready = s["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .cloned();
        assert_eq!(ready.map(|c| c["status"].clone()), Some(json!("True")));
        assert_eq!(
            s["containerStatuses"][0]["image"],
            "docker.io/library/nginx:latest"
        );
        assert!(s["containerStatuses"][0]["state"]["running"]["startedAt"].is_string());
        let waiting = creating(&pod, &at);
        assert_eq!(
            waiting["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating"
        );
    }
}
