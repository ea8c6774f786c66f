//! Printers of networking.k8s.io/v1 kinds (Ingress, IngressClass, NetworkPolicy,
//! ServiceCIDR, IPAddress) and of discovery.k8s.io/v1 EndpointSlice.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::Cell::{Age, Name, Of};
use super::column::{AGE, KindPrinter, NAME, Row, text};
use super::format::{arr, label_selector, list_with_more, load_balancer, name, s, strings};
use super::time::age;

/// Printers of networking kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "networking.k8s.io",
        kind: "Ingress",
        columns: &[
            NAME,
            text(
                "Class",
                "The name of the IngressClass resource that should be used for additional configuration",
            ),
            text(
                "Hosts",
                "Hosts that incoming requests are matched against before the ingress rule",
            ),
            text(
                "Address",
                "Address is a list containing ingress points for the load-balancer",
            ),
            text("Ports", "Ports of TLS configurations that open"),
            AGE,
        ],
        row: ingress,
    },
    KindPrinter {
        group: "networking.k8s.io",
        kind: "IngressClass",
        columns: &[
            NAME,
            text(
                "Controller",
                "Controller that is responsible for handling this class",
            ),
            text(
                "Parameters",
                "A reference to a resource with additional parameters",
            ),
            AGE,
        ],
        row: |o, now| {
            let params = match o.pointer("/spec/parameters").filter(|p| !p.is_null()) {
                None => "<none>".to_string(),
                Some(p) => {
                    let kind = match p.get("apiGroup").and_then(Value::as_str) {
                        Some(g) => format!("{}.{g}", s(p, "/kind")),
                        None => s(p, "/kind").to_string(),
                    };
                    format!("{kind}/{}", s(p, "/name"))
                }
            };
            Row::of(vec![
                name(o),
                json!(s(o, "/spec/controller")),
                json!(params),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "networking.k8s.io",
        kind: "NetworkPolicy",
        columns: &[
            NAME,
            text("Pod-Selector", "The pods the policy applies to."),
            AGE,
        ],
        row: |o, now| {
            let sel = Of(|o| json!(label_selector(o.pointer("/spec/podSelector"))));
            Row::cells(o, now, &[Name, sel, Age])
        },
    },
    KindPrinter {
        group: "networking.k8s.io",
        kind: "ServiceCIDR",
        columns: &[
            NAME,
            text(
                "CIDRs",
                "The IP ranges service addresses are allocated from.",
            ),
            AGE,
        ],
        row: |o, now| {
            Row::of(vec![
                name(o),
                json!(strings(o, "/spec/cidrs").join(",")),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "networking.k8s.io",
        kind: "IPAddress",
        columns: &[
            NAME,
            text("ParentRef", "The object the address is allocated to."),
        ],
        // Upstream sends an age cell although the table has no Age column.
        row: |o, now| Row::cells(o, now, &[Name, Of(|o| json!(parent_ref(o))), Age]),
    },
    KindPrinter {
        group: "discovery.k8s.io",
        kind: "EndpointSlice",
        columns: &[
            NAME,
            text("AddressType", "The type of address the slice carries."),
            text("Ports", "The ports of the endpoints."),
            text("Endpoints", "The addresses of the endpoints."),
            AGE,
        ],
        row: |o, now| {
            let ports: Vec<String> = arr(o, "/ports")
                .iter()
                .map(|p| {
                    match (
                        p.get("port").and_then(Value::as_i64),
                        p.get("name").and_then(Value::as_str),
                    ) {
                        (Some(n), _) => n.to_string(),
                        (None, Some(n)) => n.to_string(),
                        (None, None) => "*".to_string(),
                    }
                })
                .collect();
            let addrs: Vec<String> = arr(o, "/endpoints")
                .iter()
                .flat_map(|e| arr(e, "/addresses").iter())
                .map(|a| a.as_str().unwrap_or("").to_string())
                .collect();
            Row::of(vec![
                name(o),
                json!(s(o, "/addressType")),
                json!(list_with_more(&ports, 3)),
                json!(list_with_more(&addrs, 3)),
                json!(age(o, now)),
            ])
        },
    },
];

fn parent_ref(o: &Value) -> String {
    let Some(p) = o.pointer("/spec/parentRef").filter(|p| !p.is_null()) else {
        return "<none>".into();
    };
    let mut out = match s(p, "/group") {
        "" => s(p, "/resource").to_lowercase(),
        g => format!("{}.{g}", s(p, "/resource")).to_lowercase(),
    };
    if !s(p, "/namespace").is_empty() {
        out.push('/');
        out.push_str(s(p, "/namespace"));
    }
    out.push('/');
    out.push_str(s(p, "/name"));
    out
}

fn ingress(o: &Value, now: Timestamp) -> Row {
    const MAX: usize = 3;
    let rules = arr(o, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if hosts.len() == MAX {
            more = true;
        }
        if !more && !s(r, "/host").is_empty() {
            hosts.push(s(r, "/host"));
        }
    }
    let hosts = match (hosts.is_empty(), more) {
        (true, _) => "*".to_string(),
        (false, true) => format!("{} + {} more...", hosts.join(","), rules.len() - MAX),
        (false, false) => hosts.join(","),
    };
    let ports = if arr(o, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    let class = o
        .pointer("/spec/ingressClassName")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    Row::of(vec![
        name(o),
        json!(class),
        json!(hosts),
        json!(load_balancer(o.pointer("/status/loadBalancer"))),
        json!(ports),
        json!(age(o, now)),
    ])
}
