//! What the controller-manager scenarios record of an object: the fields a controller sets,
//! without what differs between two clusters by nature (node names and addresses, container
//! ids, a template's hash and a generated name's random suffix are replaced).

use serde_json::{Value, json};

/// An owner reference: who, and whether it controls and blocks.
pub fn owner_refs(v: &Value) -> Value {
    let refs = v["metadata"]["ownerReferences"].as_array().cloned();
    let refs: Vec<Value> = refs
        .unwrap_or_default()
        .iter()
        .map(|r| {
            json!([
                r["kind"],
                r["name"],
                r["controller"],
                r["blockOwnerDeletion"]
            ])
        })
        .collect();
    Value::Array(refs)
}

/// Conditions as type, status, reason and message.
pub fn conditions(v: &Value) -> Value {
    let cs = v["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut cs: Vec<Value> = cs
        .iter()
        .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
        .collect();
    cs.sort_by_key(|c| c[0].to_string());
    Value::Array(cs)
}

/// The deletion state of an object: finalizers, being deleted, owners; or the error's code.
pub fn deletion(v: &Value) -> Value {
    if v["kind"] == "Status" {
        return json!({"code": v["code"], "reason": v["reason"]});
    }
    json!({"name": v["metadata"]["name"], "finalizers": v["metadata"]["finalizers"],
        "deleting": v["metadata"]["deletionTimestamp"].is_string(), "owners": owner_refs(v)})
}

/// A generated name with its 5-letter random suffix replaced (`web-HASH-XXXXX`).
pub fn generated(name: &str) -> String {
    match name.rsplit_once('-') {
        Some((prefix, suffix)) if suffix.len() == 5 => format!("{prefix}-XXXXX"),
        _ => name.to_string(),
    }
}

/// Whether a pod is running and ready.
pub fn running(p: &Value) -> bool {
    p["status"]["phase"] == "Running"
        && p["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// A pod as its controllers and its node leave it. A container's `started` is left out: a
/// hollow node's kubelet (kubemark) runs no prober manager, which is what sets it.
pub fn pod(p: &Value) -> Value {
    let statuses = p["status"]["containerStatuses"].as_array().cloned();
    let statuses: Vec<Value> = statuses
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let state = c["state"]
                .as_object()
                .map(|s| s.keys().cloned().collect::<Vec<_>>());
            json!([c["name"], c["ready"], c["restartCount"], state])
        })
        .collect();
    let mut conds: Vec<Value> = p["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| json!([c["type"], c["status"]]))
        .collect();
    conds.sort_by_key(|c| c[0].to_string());
    json!({"name": generated(p["metadata"]["name"].as_str().unwrap_or_default()),
        "labels": p["metadata"]["labels"], "finalizers": p["metadata"]["finalizers"],
        "owners": owner_refs(p), "deleting": p["metadata"]["deletionTimestamp"].is_string(),
        "phase": p["status"]["phase"], "qos": p["status"]["qosClass"], "conditions": conds,
        "containers": statuses, "scheduled": p["spec"]["nodeName"].is_string(),
        "podIP": p["status"]["podIP"].is_string(), "hostIP": p["status"]["hostIP"].is_string(),
        "started": p["status"]["startTime"].is_string()})
}

/// The items of a list answer.
pub fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// `v` with every occurrence of each `(from, to)` replaced inside its strings.
pub fn replaced(v: &Value, subs: &[(String, String)]) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (from, to) in subs.iter().filter(|(f, _)| !f.is_empty()) {
                s = s.replace(from.as_str(), to);
            }
            Value::String(s)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| replaced(x, subs)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    (
                        replaced(&json!(k), subs).as_str().unwrap_or(k).to_string(),
                        replaced(x, subs),
                    )
                })
                .collect(),
        ),
        _ => v.clone(),
    }
}
