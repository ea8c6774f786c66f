//! The endpoints and endpointslice controllers: every Service with a selector (not of type
//! ExternalName) gets an Endpoints object of its name (ready pods under `addresses`, the
//! others under `notReadyAddresses`) and an EndpointSlice (`<service>-<5 letters>`, owned by
//! the Service, one endpoint per pod with its `ready`/`serving`/`terminating` conditions),
//! listing the pods of its namespace that match the selector and have an IP, with the
//! Service's ports resolved against the pods' container ports. The Endpoints of a deleted
//! Service are deleted; its EndpointSlices go with it through the garbage collector.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::deployments::MANAGER;
use super::objects::{
    ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES, condition_true, controller_ref, delete, key_of,
    list, terminal, text, upsert,
};
use crate::machinery::meta;
use crate::machinery::selector::LabelSelector;
use crate::store::State;

/// Label of the Endpoints this controller manages.
const ENDPOINTS_MANAGED_BY: (&str, &str) =
    ("endpoints.kubernetes.io/managed-by", "endpoint-controller");
/// Label of the EndpointSlices this controller manages.
const SLICE_MANAGED_BY: (&str, &str) = (
    "endpointslice.kubernetes.io/managed-by",
    "endpointslice-controller.k8s.io",
);
/// Label naming a slice's Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// What a Service's endpoints list: the Service, its pods (with an IP, not finished) and its
/// ports resolved against them: (name, port, protocol).
struct Backends<'a> {
    svc: &'a Value,
    pods: Vec<&'a Arc<Value>>,
    ports: Vec<(String, i64, String)>,
}

/// One pass over every Service; true if anything was written.
pub(super) fn reconcile(st: &mut State) -> bool {
    let services = list(st, SERVICES);
    let pods = list(st, PODS);
    let endpoints = list(st, ENDPOINTS);
    let slices = list(st, ENDPOINT_SLICES);
    let mut changed = false;
    for svc in &services {
        let selector = svc.pointer("/spec/selector").and_then(Value::as_object);
        let selector = selector.filter(|s| !s.is_empty());
        let Some(selector) = selector else { continue };
        if text(svc, "/spec/type") == "ExternalName" {
            continue;
        }
        let Some(sel) = LabelSelector::from_object(&json!({"matchLabels": selector})) else {
            continue;
        };
        let ns = meta::namespace(svc);
        let members: Vec<&Arc<Value>> = pods
            .iter()
            .filter(|p| meta::namespace(p) == ns && sel.matches(p))
            .filter(|p| !terminal(p) && !text(p, "/status/podIP").is_empty())
            .collect();
        let ports = ports(svc, members.first().map(|p| &***p));
        let b = Backends {
            svc,
            pods: members,
            ports,
        };
        changed |= sync_endpoints(st, &b, &endpoints);
        changed |= sync_slice(st, &b, &slices);
    }
    for ep in &endpoints {
        let ours = meta::field(ep, "labels")
            .and_then(|l| l.get(ENDPOINTS_MANAGED_BY.0))
            .is_some_and(|v| v == ENDPOINTS_MANAGED_BY.1);
        let service_gone = !services.iter().any(|s| key_of(s) == key_of(ep));
        if ours && service_gone {
            changed |= delete(st, ENDPOINTS, ep);
        }
    }
    changed
}

/// The Service's ports with their targets resolved (a named target through the first
/// pod's container ports; unresolved ones are left out): (name, port, protocol).
fn ports(svc: &Value, pod: Option<&Value>) -> Vec<(String, i64, String)> {
    let container_port = |name: &str| {
        pod?.pointer("/spec/containers")?
            .as_array()?
            .iter()
            .flat_map(|c| {
                c.get("ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|p| p.get("containerPort"))
            .and_then(Value::as_i64)
    };
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let target = match p.get("targetPort") {
                Some(Value::Number(n)) => n.as_i64(),
                Some(Value::String(name)) => container_port(name),
                _ => p.get("port").and_then(Value::as_i64),
            }?;
            let name = text(p, "/name").to_string();
            let protocol = p
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("TCP")
                .to_string();
            Some((name, target, protocol))
        })
        .collect()
}

fn target_ref(pod: &Value) -> Value {
    json!({"kind": "Pod", "name": meta::name(pod), "namespace": meta::namespace(pod), "uid": meta::uid(pod)})
}

/// Labels of a managed object: the Service's own plus `extra`.
fn labels(svc: &Value, extra: &[(&str, &str)]) -> Value {
    let mut l: Map<String, Value> = meta::field(svc, "labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in extra {
        l.insert((*k).to_string(), json!(v));
    }
    Value::Object(l)
}

fn sync_endpoints(st: &mut State, b: &Backends<'_>, existing: &[Arc<Value>]) -> bool {
    let mut ready = Vec::new();
    let mut not_ready = Vec::new();
    let svc = b.svc;
    for pod in b.pods.iter().filter(|p| !meta::is_deleting(p)) {
        let address = json!({"ip": text(pod, "/status/podIP"), "nodeName": text(pod, "/spec/nodeName"),
            "targetRef": target_ref(pod)});
        if condition_true(pod, "Ready") {
            ready.push(address)
        } else {
            not_ready.push(address)
        }
    }
    let by_ip = |a: &Value, b: &Value| a["ip"].as_str().cmp(&b["ip"].as_str());
    ready.sort_by(by_ip);
    not_ready.sort_by(by_ip);
    let mut subset = Map::new();
    if !ready.is_empty() {
        subset.insert("addresses".into(), Value::Array(ready));
    }
    if !not_ready.is_empty() {
        subset.insert("notReadyAddresses".into(), Value::Array(not_ready));
    }
    let mut want_labels = labels(svc, &[ENDPOINTS_MANAGED_BY]);
    if let Some(m) = want_labels.as_object_mut() {
        m.remove(SERVICE_NAME);
    }
    let current = existing.iter().find(|e| key_of(e) == key_of(svc));
    let mut obj = match current {
        Some(cur) => (**cur).clone(),
        None => json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": meta::name(svc), "namespace": meta::namespace(svc)}}),
    };
    meta::metadata_mut(&mut obj).insert("labels".into(), want_labels);
    if let Some(m) = obj.as_object_mut() {
        if subset.is_empty() {
            m.remove("subsets");
        } else {
            let ports: Vec<Value> = b
                .ports
                .iter()
                .map(|(name, port, protocol)| {
                    let mut p = json!({"port": port, "protocol": protocol});
                    if !name.is_empty() {
                        p["name"] = json!(name);
                    }
                    p
                })
                .collect();
            subset.insert("ports".into(), Value::Array(ports));
            m.insert("subsets".into(), json!([subset]));
        }
    }
    upsert(st, ENDPOINTS, MANAGER, current, obj)
}

fn sync_slice(st: &mut State, b: &Backends<'_>, existing: &[Arc<Value>]) -> bool {
    let svc = b.svc;
    let mut endpoints: Vec<Value> = b
        .pods
        .iter()
        .map(|pod| {
            let ready = condition_true(pod, "Ready") && !meta::is_deleting(pod);
            json!({"addresses": [text(pod, "/status/podIP")],
                "conditions": {"ready": ready, "serving": condition_true(pod, "Ready"),
                    "terminating": meta::is_deleting(pod)},
                "nodeName": text(pod, "/spec/nodeName"), "targetRef": target_ref(pod)})
        })
        .collect();
    endpoints.sort_by(|a, b| a["addresses"][0].as_str().cmp(&b["addresses"][0].as_str()));
    let ports: Vec<Value> = b
        .ports
        .iter()
        .map(|(name, port, protocol)| json!({"name": name, "port": port, "protocol": protocol}))
        .collect();
    let current = existing.iter().find(|s| {
        meta::namespace(s) == meta::namespace(svc)
            && super::objects::controller_uid(s) == Some(meta::uid(svc))
    });
    let mut obj = match current {
        Some(cur) => (**cur).clone(),
        None => json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": format!("{}-", meta::name(svc)), "namespace": meta::namespace(svc),
                "ownerReferences": [controller_ref(svc, "v1", "Service")]},
            "addressType": "IPv4"}),
    };
    let want_labels = labels(svc, &[(SERVICE_NAME, meta::name(svc)), SLICE_MANAGED_BY]);
    meta::metadata_mut(&mut obj).insert("labels".into(), want_labels);
    obj["endpoints"] = Value::Array(endpoints);
    obj["ports"] = Value::Array(ports);
    upsert(st, ENDPOINT_SLICES, MANAGER, current, obj)
}
