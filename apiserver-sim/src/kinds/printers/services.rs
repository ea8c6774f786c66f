//! Printers of core/v1 Service (`TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE`, wide `SELECTOR`)
//! and Endpoints (up to three `address:port` pairs, then `+ N more...`).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::Cell::{Age, Name, Of};
use super::column::{AGE, KindPrinter, NAME, Row, text, wide};
use super::format::{arr, int, labels, load_balancer, name, s, s_or, strings};
use super::time::age;

/// The Service and Endpoints printers.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "",
        kind: "Service",
        columns: &[
            NAME,
            text(
                "Type",
                "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types",
            ),
            text(
                "Cluster-IP",
                "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
            ),
            text(
                "External-IP",
                "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",
            ),
            text(
                "Port(s)",
                "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
            ),
            AGE,
            wide(
                "Selector",
                "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
            ),
        ],
        row: service,
    },
    KindPrinter {
        group: "",
        kind: "Endpoints",
        columns: &[
            NAME,
            text("Endpoints", "The addresses and ports of the endpoints."),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Of(|o| json!(endpoints(o))), Age]),
    },
];

fn service(o: &Value, now: Timestamp) -> Row {
    let ty = s(o, "/spec/type");
    let cluster_ip = arr(o, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or_else(|| s_or(o, "/spec/clusterIP", "<none>"));
    let external_ips = strings(o, "/spec/externalIPs");
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
