//! Printers of core/v1 Service (`TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE`, wide `SELECTOR`)
//! and Endpoints (up to three `address:port` pairs, then `+ N more...`).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{AGE, KindPrinter, NAME, Row, col, wide};
use super::format::{arr, int, labels, load_balancer, s, s_or};
use super::time::age;

fn name(o: &Value) -> Value {
    json!(s(o, "/metadata/name"))
}

/// The Service and Endpoints printers.
pub(super) const KINDS: &[KindPrinter] = &[
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
];

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
