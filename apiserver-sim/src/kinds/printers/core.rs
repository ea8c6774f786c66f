//! Printers of core/v1 kinds other than Pod, Service, Endpoints and Event: Namespace,
//! ConfigMap, Secret, ServiceAccount, Node, PodTemplate, ReplicationController,
//! ResourceQuota, ComponentStatus.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::Cell::{Age, Containers, Images, Int, Len, Name, Of, Str};
use super::column::{AGE, CONTAINERS, IMAGES, KindPrinter, NAME, Row, col, text, wide};
use super::format::{arr, labels, len, name, replicas, s, s_or};
use super::time::age;

/// Printers of core kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "",
        kind: "Namespace",
        columns: &[NAME, text("Status", "The status of the namespace"), AGE],
        row: |o, now| Row::cells(o, now, &[Name, Str("/status/phase"), Age]),
    },
    KindPrinter {
        group: "",
        kind: "ConfigMap",
        columns: &[
            NAME,
            text(
                "Data",
                "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
            ),
            AGE,
        ],
        row: |o, now| {
            let data = |o: &Value| json!(len(o, "/data") + len(o, "/binaryData"));
            Row::cells(o, now, &[Name, Of(data), Age])
        },
    },
    KindPrinter {
        group: "",
        kind: "Secret",
        columns: &[
            NAME,
            text(
                "Type",
                "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
            ),
            text(
                "Data",
                "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
            ),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Str("/type"), Len("/data"), Age]),
    },
    KindPrinter {
        group: "",
        kind: "ServiceAccount",
        // Kubernetes 1.36 prints no SECRETS column (token Secrets are no longer listed).
        columns: &[NAME, AGE],
        row: |o, now| Row::cells(o, now, &[Name, Age]),
    },
    KindPrinter {
        group: "",
        kind: "Node",
        columns: &[
            NAME,
            text("Status", "The status of the node"),
            text("Roles", "The roles of the node"),
            AGE,
            text("Version", "Kubelet version reported by the node."),
            wide("Internal-IP", "The node's internal address."),
            wide("External-IP", "The node's external address."),
            wide("OS-Image", "OS image reported by the node."),
            wide("Kernel-Version", "Kernel version reported by the node."),
            wide(
                "Container-Runtime",
                "Container runtime version reported by the node.",
            ),
        ],
        row: node,
    },
    KindPrinter {
        group: "",
        kind: "PodTemplate",
        columns: &[
            NAME,
            text("Containers", "Names of each container in the template."),
            text(
                "Images",
                "Images referenced by each container in the template.",
            ),
            text("Pod Labels", "The labels for the pod template."),
        ],
        row: |o, now| {
            let pod_labels = |o: &Value| json!(labels(o.pointer("/template/metadata/labels")));
            let c = "/template/spec/containers";
            Row::cells(o, now, &[Name, Containers(c), Images(c), Of(pod_labels)])
        },
    },
    KindPrinter {
        group: "",
        kind: "ReplicationController",
        columns: &[
            NAME,
            col("Desired", "integer", "Desired number of replicas."),
            col(
                "Current",
                "integer",
                "Most recently observed number of replicas.",
            ),
            col("Ready", "integer", "Number of ready replicas."),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "The labels of the pods the controller manages."),
        ],
        row: |o, now| {
            let c = "/spec/template/spec/containers";
            let selector = |o: &Value| json!(labels(o.pointer("/spec/selector")));
            let cells = [
                Name,
                Of(|o| json!(replicas(o))),
                Int("/status/replicas"),
                Int("/status/readyReplicas"),
                Age,
                Containers(c),
                Images(c),
                Of(selector),
            ];
            Row::cells(o, now, &cells)
        },
    },
    KindPrinter {
        group: "",
        kind: "ResourceQuota",
        columns: &[
            NAME,
            text(
                "Request",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            text(
                "Limit",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
            ),
            AGE,
        ],
        row: resource_quota,
    },
    KindPrinter {
        group: "",
        kind: "ComponentStatus",
        columns: &[
            NAME,
            text("Status", "Status of the component conditions"),
            text("Message", "Message of the component conditions"),
            text("Error", "Error of the component conditions"),
        ],
        row: |o, _| {
            let healthy = arr(o, "/conditions")
                .iter()
                .find(|c| s(c, "/type") == "Healthy");
            let status = match healthy.map(|c| s(c, "/status")) {
                None => "Unknown",
                Some("True") => "Healthy",
                Some(_) => "Unhealthy",
            };
            let (message, error) = healthy.map_or(("", ""), |c| (s(c, "/message"), s(c, "/error")));
            Row::of(vec![name(o), json!(status), json!(message), json!(error)])
        },
    },
];

fn node_roles(o: &Value) -> String {
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
                    Some(r) if !r.is_empty() => Some(r.to_string()),
                    Some(_) => None,
                    None if k == "kubernetes.io/role" => {
                        v.as_str().filter(|v| !v.is_empty()).map(str::to_string)
                    }
                    None => None,
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn node_address(o: &Value, ty: &str) -> String {
    arr(o, "/status/addresses")
        .iter()
        .find(|a| s(a, "/type") == ty)
        .map_or_else(|| "<none>".to_string(), |a| s(a, "/address").to_string())
}

fn node(o: &Value, now: Timestamp) -> Row {
    // The last condition of a type wins, as when upstream indexes them by type.
    let ready = arr(o, "/status/conditions")
        .iter()
        .rev()
        .find(|c| s(c, "/type") == "Ready");
    let mut status = vec![match ready.map(|c| s(c, "/status")) {
        None => "Unknown",
        Some("True") => "Ready",
        Some(_) => "NotReady",
    }];
    if o.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let info = |f: &str| s_or(o, &format!("/status/nodeInfo/{f}"), "<unknown>").to_string();
    Row::of(vec![
        name(o),
        json!(status.join(",")),
        json!(node_roles(o)),
        json!(age(o, now)),
        json!(s(o, "/status/nodeInfo/kubeletVersion")),
        json!(node_address(o, "InternalIP")),
        json!(node_address(o, "ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ])
}

fn resource_quota(o: &Value, now: Timestamp) -> Row {
    let mut names: Vec<&String> = o
        .pointer("/status/hard")
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    names.sort();
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for r in names {
        let used = o
            .pointer("/status/used")
            .and_then(|u| u.get(r.as_str()))
            .and_then(Value::as_str)
            .unwrap_or("0");
        let hard = o
            .pointer("/status/hard")
            .and_then(|h| h.get(r.as_str()))
            .and_then(Value::as_str)
            .unwrap_or("0");
        let text = format!("{r}: {used}/{hard}");
        if r.starts_with("limits.") {
            limits.push(text);
        } else {
            requests.push(text);
        }
    }
    Row::of(vec![
        name(o),
        json!(requests.join(", ")),
        json!(limits.join(", ")),
        json!(age(o, now)),
    ])
}
