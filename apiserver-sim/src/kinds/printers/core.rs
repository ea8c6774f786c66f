//! Printers of core/v1 kinds other than Pod (and of events.k8s.io/v1 events, which upstream
//! converts to the same internal Event): Namespace, ConfigMap, Secret, ServiceAccount,
//! Service, Endpoints, Node, Event, PodTemplate, ReplicationController, ResourceQuota,
//! ComponentStatus.

use std::borrow::Cow;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::format::{arr, containers, int, labels, len, s, s_or};
use super::time::{age, since};
use super::{AGE, CONTAINERS, Column, IMAGES, KindPrinter, NAME, Row, col, wide};

fn name(o: &Value) -> Value {
    json!(s(o, "/metadata/name"))
}

/// Printers of core kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "",
        kind: "Namespace",
        columns: &[
            NAME,
            col("Status", "string", "The status of the namespace"),
            AGE,
        ],
        row: |o, now| {
            Row::of(vec![
                name(o),
                json!(s(o, "/status/phase")),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "",
        kind: "ConfigMap",
        columns: &[
            NAME,
            col("Data", "string", "The number of data and binaryData keys."),
            AGE,
        ],
        row: |o, now| {
            let n = len(o, "/data") + len(o, "/binaryData");
            Row::of(vec![name(o), json!(n), json!(age(o, now))])
        },
    },
    KindPrinter {
        group: "",
        kind: "Secret",
        columns: &[
            NAME,
            col(
                "Type",
                "string",
                "Used to facilitate programmatic handling of secret data.",
            ),
            col("Data", "string", "The number of data keys."),
            AGE,
        ],
        row: |o, now| {
            let cells = vec![
                name(o),
                json!(s(o, "/type")),
                json!(len(o, "/data")),
                json!(age(o, now)),
            ];
            Row::of(cells)
        },
    },
    KindPrinter {
        group: "",
        kind: "ServiceAccount",
        columns: &[
            NAME,
            col("Secrets", "string", "The number of secrets listed."),
            AGE,
        ],
        row: |o, now| Row::of(vec![name(o), json!(len(o, "/secrets")), json!(age(o, now))]),
    },
    KindPrinter {
        group: "",
        kind: "Service",
        columns: &[
            NAME,
            col("Type", "string", "How the service is exposed."),
            col(
                "Cluster-IP",
                "string",
                "The IP address of the service inside the cluster.",
            ),
            col(
                "External-IP",
                "string",
                "The addresses the service is reachable at from outside.",
            ),
            col("Port(s)", "string", "The ports the service exposes."),
            AGE,
            wide(
                "Selector",
                "string",
                "The labels of the pods traffic goes to.",
            ),
        ],
        row: service,
    },
    KindPrinter {
        group: "",
        kind: "Endpoints",
        columns: &[
            NAME,
            col(
                "Endpoints",
                "string",
                "The addresses and ports of the endpoints.",
            ),
            AGE,
        ],
        row: |o, now| Row::of(vec![name(o), json!(endpoints(o)), json!(age(o, now))]),
    },
    KindPrinter {
        group: "",
        kind: "Node",
        columns: &[
            NAME,
            col("Status", "string", "The status of the node"),
            col("Roles", "string", "The roles of the node"),
            AGE,
            col("Version", "string", "Kubelet version reported by the node."),
            wide("Internal-IP", "string", "The node's internal address."),
            wide("External-IP", "string", "The node's external address."),
            wide("OS-Image", "string", "OS image reported by the node."),
            wide(
                "Kernel-Version",
                "string",
                "Kernel version reported by the node.",
            ),
            wide(
                "Container-Runtime",
                "string",
                "Container runtime version reported by the node.",
            ),
        ],
        row: node,
    },
    KindPrinter {
        group: "",
        kind: "Event",
        columns: EVENT_COLUMNS,
        row: event,
    },
    KindPrinter {
        group: "events.k8s.io",
        kind: "Event",
        columns: EVENT_COLUMNS,
        row: event,
    },
    KindPrinter {
        group: "",
        kind: "PodTemplate",
        columns: &[
            NAME,
            col(
                "Containers",
                "string",
                "Names of each container in the template.",
            ),
            col(
                "Images",
                "string",
                "Images referenced by each container in the template.",
            ),
            col("Pod Labels", "string", "The labels for the pod template."),
        ],
        row: |o, _| {
            let (names, images) = containers(arr(o, "/template/spec/containers"));
            let pod_labels = labels(o.pointer("/template/metadata/labels"));
            Row::of(vec![
                name(o),
                json!(names),
                json!(images),
                json!(pod_labels),
            ])
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
            wide(
                "Selector",
                "string",
                "The labels of the pods the controller manages.",
            ),
        ],
        row: |o, now| {
            let (names, images) = containers(arr(o, "/spec/template/spec/containers"));
            Row::of(vec![
                name(o),
                json!(replicas(o)),
                json!(int(o, "/status/replicas")),
                json!(int(o, "/status/readyReplicas")),
                json!(age(o, now)),
                json!(names),
                json!(images),
                json!(labels(o.pointer("/spec/selector"))),
            ])
        },
    },
    KindPrinter {
        group: "",
        kind: "ResourceQuota",
        columns: &[
            NAME,
            col(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            col(
                "Limit",
                "string",
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
            col("Status", "string", "Status of the component conditions"),
            col("Message", "string", "Message of the component conditions"),
            col("Error", "string", "Error of the component conditions"),
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

/// `spec.replicas`, 1 when unset (the value the API server defaults it to).
pub(super) fn replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

const EVENT_COLUMNS: &[Column] = &[
    col(
        "Last Seen",
        "string",
        "The time the event was last recorded.",
    ),
    col("Type", "string", "Type of this event (Normal, Warning)."),
    col(
        "Reason",
        "string",
        "Why the event happened, in a short machine-understandable form.",
    ),
    col("Object", "string", "The object this event is about."),
    wide(
        "Subobject",
        "string",
        "The part of the object the event is about.",
    ),
    wide("Source", "string", "The component reporting this event."),
    col(
        "Message",
        "string",
        "A human-readable description of the event.",
    ),
    wide(
        "First Seen",
        "string",
        "The time the event was first recorded.",
    ),
    wide(
        "Count",
        "string",
        "The number of times this event has occurred.",
    ),
    Column {
        name: Cow::Borrowed("Name"),
        ty: Cow::Borrowed("string"),
        format: Cow::Borrowed("name"),
        description: Cow::Borrowed(super::NAME_DESC),
        priority: 1,
    },
];

/// Reads an event of either version: core/v1 field names, else events.k8s.io/v1 ones.
fn ev<'a>(o: &'a Value, core: &str, events: &str) -> Option<&'a Value> {
    o.pointer(core)
        .or_else(|| o.pointer(events))
        .filter(|v| !v.is_null())
}

fn event(o: &Value, now: Timestamp) -> Row {
    let first = match ev(o, "/firstTimestamp", "/deprecatedFirstTimestamp") {
        Some(t) => since(Some(t), now),
        None => since(o.get("eventTime"), now),
    };
    let mut last = match ev(o, "/lastTimestamp", "/deprecatedLastTimestamp") {
        Some(t) => since(Some(t), now),
        None => first.clone(),
    };
    let mut count = ev(o, "/count", "/deprecatedCount")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(series) = o.get("series").filter(|v| !v.is_null()) {
        last = since(series.get("lastObservedTime"), now);
        count = int(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let involved = ev(o, "/involvedObject", "/regarding")
        .cloned()
        .unwrap_or(Value::Null);
    let kind = s(&involved, "/kind").to_lowercase();
    let target = match s(&involved, "/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    let source = ev(o, "/source", "/deprecatedSource")
        .cloned()
        .unwrap_or(Value::Null);
    let component = s_or(
        &source,
        "/component",
        s_or(o, "/reportingComponent", s(o, "/reportingController")),
    );
    let instance = s_or(&source, "/host", s(o, "/reportingInstance"));
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    let message = ev(o, "/message", "/note")
        .and_then(Value::as_str)
        .unwrap_or("");
    Row::of(vec![
        json!(last),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(target),
        json!(s(&involved, "/fieldPath")),
        json!(source),
        json!(message.trim()),
        json!(first),
        json!(count),
        name(o),
    ])
}

/// IPs (or hostnames) of load-balancer ingress points, sorted and unique, comma-joined.
pub(super) fn load_balancer(status: Option<&Value>) -> String {
    let mut all: Vec<&str> = status
        .and_then(|s| s.get("ingress"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|i| s_or(i, "/ip", s(i, "/hostname")))
                .filter(|v| !v.is_empty())
                .collect()
        })
        .unwrap_or_default();
    all.sort_unstable();
    all.dedup();
    all.join(",")
}

fn service(o: &Value, now: Timestamp) -> Row {
    let ty = s(o, "/spec/type");
    let cluster_ip = arr(o, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or_else(|| s_or(o, "/spec/clusterIP", "<none>"));
    let external_ips: Vec<&str> = arr(o, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let external = match ty {
        "ClusterIP" | "NodePort" if external_ips.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external_ips.join(","),
        "LoadBalancer" => {
            let lb = load_balancer(o.pointer("/status/loadBalancer"));
            let mut all: Vec<&str> = lb.split(',').filter(|x| !x.is_empty()).collect();
            all.extend(&external_ips);
            if all.is_empty() {
                "<pending>".to_string()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => s(o, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    };
    let ports: Vec<String> = arr(o, "/spec/ports")
        .iter()
        .map(|p| {
            let (port, proto) = (int(p, "/port"), s(p, "/protocol"));
            match int(p, "/nodePort") {
                n if n > 0 => format!("{port}:{n}/{proto}"),
                _ => format!("{port}/{proto}"),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    Row::of(vec![
        name(o),
        json!(ty),
        json!(cluster_ip),
        json!(external),
        json!(ports),
        json!(age(o, now)),
        json!(labels(o.pointer("/spec/selector"))),
    ])
}

/// `host:port` (brackets around an IPv6 host).
fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

fn endpoints(o: &Value) -> String {
    let subsets = arr(o, "/subsets");
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut count = 0usize;
    for ss in subsets {
        let addrs = arr(ss, "/addresses");
        let ports = arr(ss, "/ports");
        if ports.is_empty() {
            count += addrs.len();
            list.extend(addrs.iter().map(|a| s(a, "/ip").to_string()));
            continue;
        }
        for p in ports {
            count += addrs.len();
            list.extend(
                addrs
                    .iter()
                    .map(|a| host_port(s(a, "/ip"), int(p, "/port"))),
            );
        }
    }
    let more = count > MAX;
    list.truncate(MAX);
    let shown = list.join(",");
    if more {
        format!("{shown} + {} more...", count - MAX)
    } else {
        shown
    }
}

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
