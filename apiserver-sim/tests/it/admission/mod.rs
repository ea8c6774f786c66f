//! Admission and conversion webhooks, called by the simulator as a real API server calls
//! them (Kubernetes docs, "Dynamic Admission Control"; apiserver
//! `pkg/admission/plugin/webhook`; apiextensions-apiserver `conversion/webhook_converter.go`),
//! against a webhook server written here (`harness`).

mod certificates;
mod conversion;
mod failure;
mod formats;
mod harness;
mod kubectl;
mod matching;
mod mutating;
mod validating;

use apiserver_sim::ApiServer;
use serde_json::Value;

use crate::common::{self, Raw};

/// Sends a JSON request with a fresh connection.
pub async fn send(server: &ApiServer, method: &str, path: &str, body: &Value) -> Raw {
    let ct = if method == "PATCH" {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(body).expect("json")
    };
    common::raw(server, method, path, &[("Content-Type", ct)], &bytes).await
}

/// The `Warning` headers of a response.
pub fn warnings(r: &Raw) -> Vec<String> {
    r.headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("warning"))
        .map(|(_, v)| v.clone())
        .collect()
}

/// Stores a webhook configuration (through the same validation and defaults as a POST).
pub fn configure(server: &ApiServer, cfg: Value) {
    server
        .create_json(cfg)
        .expect("webhook configuration stored");
}

/// A ConfigMap body.
pub fn cm(name: &str, labels: Value) -> Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}
