//! The simulated node: one Ready Node object, registered when the workload simulator starts
//! (as a kubelet registers its node), that every pod is scheduled to.

use serde_json::{Value, json};

use super::objects::{NODES, create, write_status};
use crate::kinds::KUBE_MINOR;
use crate::machinery::meta;
use crate::store::State;

/// The node's name.
pub(super) const NODE_NAME: &str = "sim-node";
/// The node's InternalIP (the pods' `hostIP`).
pub(super) const NODE_IP: &str = "172.18.0.2";

fn condition(ty: &str, status: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": ty, "status": status, "reason": reason, "message": message,
        "lastHeartbeatTime": now, "lastTransitionTime": now})
}

/// The status a healthy kubelet reports.
fn status() -> Value {
    let now = meta::now_rfc3339();
    let resources = json!({"cpu": "4", "memory": "8148Mi", "pods": "110",
        "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"});
    json!({
        "addresses": [
            {"type": "InternalIP", "address": NODE_IP},
            {"type": "Hostname", "address": NODE_NAME},
        ],
        "capacity": resources,
        "allocatable": resources,
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available", &now),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure", &now),
            condition("PIDPressure", "False", "KubeletHasSufficientPID",
                "kubelet has sufficient PID available", &now),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", &now),
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": meta::new_uid(),
            "containerRuntimeVersion": "containerd://2.1.0",
            "kernelVersion": "6.8.0",
            "kubeProxyVersion": "",
            "kubeletVersion": format!("v1.{KUBE_MINOR}.0-sim"),
            "machineID": meta::new_uid().replace('-', ""),
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": meta::new_uid(),
        },
    })
}

/// Registers the node unless it exists.
pub(super) fn register(st: &mut State) {
    if st
        .get(&NODES, &(String::new(), NODE_NAME.to_string()))
        .is_some()
    {
        return;
    }
    let node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE_NAME,
            "labels": {
                "kubernetes.io/hostname": NODE_NAME,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
            },
            "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]},
    });
    if let Some(created) = create(st, NODES, "kubelet", node) {
        write_status(st, NODES, "kubelet", &created, status());
    }
}
