//! What a scenario works with: the target, its namespace (named after the scenario and the
//! run, so that runs against a real server never collide), and the record of its probes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::normalize;
use crate::target::{self, Resp, Target};

/// `application/json`.
pub const JSON: &str = "application/json";
/// A JSON merge patch.
pub const MERGE: &str = "application/merge-patch+json";
/// A JSON patch (RFC 6902).
pub const JSON_PATCH: &str = "application/json-patch+json";
/// A strategic merge patch.
pub const STRATEGIC: &str = "application/strategic-merge-patch+json";
/// A server-side apply.
pub const APPLY: &str = "application/apply-patch+yaml";

/// One scenario's run against one target.
pub struct Ctx<'a> {
    /// The server.
    pub target: &'a Target,
    /// The run's random suffix (normalized away).
    pub run: String,
    /// The scenario's name.
    pub scenario: &'static str,
    /// Probe id → normalized observation.
    pub probes: BTreeMap<String, Value>,
    /// Requests that failed at the transport level (a broken run, not a difference).
    pub errors: Vec<String>,
}

impl<'a> Ctx<'a> {
    /// A context for `scenario` on `target`.
    pub fn new(target: &'a Target, run: &str, scenario: &'static str) -> Self {
        Self {
            target,
            run: run.to_string(),
            scenario,
            probes: BTreeMap::new(),
            errors: Vec::new(),
        }
    }

    /// The scenario's namespace.
    pub fn ns(&self) -> String {
        format!("{}-{}", self.scenario, self.run)
    }

    /// A cluster-wide name unique to the run (`<base>-<run>`).
    pub fn unique(&self, base: &str) -> String {
        format!("{base}-{}", self.run)
    }

    /// Records a derived observation.
    pub fn note(&mut self, id: &str, v: Value) {
        let v = normalize::normalized(&v, &self.run);
        self.probes.insert(format!("{}/{id}", self.scenario), v);
    }

    /// Records a response: status, content type, warnings and the normalized body.
    pub fn record(&mut self, id: &str, r: &Resp) {
        let body = if r.body.is_empty() {
            Value::Null
        } else if r.content_type.starts_with("application/json") {
            r.json()
        } else if r.content_type.starts_with("text/") || r.content_type.is_empty() {
            Value::String(String::from_utf8_lossy(&r.body).into_owned())
        } else {
            Value::String(format!("<{} bytes of {}>", r.body.len(), r.content_type))
        };
        let mut obs = json!({"status": r.status, "type": r.content_type, "body": body});
        if !r.warnings.is_empty() {
            obs["warnings"] = json!(r.warnings);
        }
        self.note(id, obs);
    }

    /// Sends a request with the admin client (not recorded); a transport failure is kept
    /// as a run error and answered as status 0.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Resp {
        let client = self.target.client().clone();
        self.send_as(&client, method, path, headers, body).await
    }

    /// Sends a request with `client` (not recorded).
    pub async fn send_as(
        &mut self,
        client: &kube::Client,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Resp {
        match target::send(client, method, path, headers, body).await {
            Ok(r) => r,
            Err(e) => {
                self.errors.push(format!(
                    "{} {}: {method} {path}: {e}",
                    self.target.name, self.scenario
                ));
                Resp {
                    status: 0,
                    content_type: String::new(),
                    warnings: Vec::new(),
                    body: bytes::Bytes::new(),
                }
            }
        }
    }

    /// A JSON request with the admin client, not recorded (set-up).
    pub async fn setup(&mut self, method: &str, path: &str, body: Value) -> Resp {
        let ct = if method == "PATCH" { MERGE } else { JSON };
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        self.send(method, path, &[("Content-Type", ct)], bytes)
            .await
    }

    /// A recorded request with a content type and a body.
    pub async fn req_ct(
        &mut self,
        id: &str,
        method: &str,
        path: &str,
        ct: &str,
        body: &str,
    ) -> Resp {
        let headers: Vec<(&str, &str)> = if body.is_empty() {
            vec![]
        } else {
            vec![("Content-Type", ct)]
        };
        let r = self
            .send(method, path, &headers, body.as_bytes().to_vec())
            .await;
        self.record(id, &r);
        r
    }

    /// A recorded JSON request (`Value::Null`: no body).
    pub async fn req(&mut self, id: &str, method: &str, path: &str, body: Value) -> Resp {
        let text = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        self.req_ct(id, method, path, JSON, &text).await
    }

    /// A recorded GET.
    pub async fn get(&mut self, id: &str, path: &str) -> Resp {
        self.req(id, "GET", path, Value::Null).await
    }

    /// GETs `path` until `done` holds for the answer or `secs` seconds pass (a controller's
    /// work is awaited, never timed): the last answer, and whether `done` held.
    pub async fn poll(
        &mut self,
        path: &str,
        secs: u64,
        done: impl Fn(&Resp) -> bool,
    ) -> (Resp, bool) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
        loop {
            let r = self.send("GET", path, &[], Vec::new()).await;
            if done(&r) {
                return (r, true);
            }
            if r.status == 0 || tokio::time::Instant::now() >= deadline {
                return (r, false);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// Deletes the scenario's namespace once its probes are done (not recorded): on a
    /// cluster its pods leave the node, which holds only so many, for the next runs.
    pub async fn release(&mut self) {
        let ns = self.ns();
        self.setup("DELETE", &format!("/api/v1/namespaces/{ns}"), Value::Null)
            .await;
    }

    /// Creates the scenario's namespace and its `default` ServiceAccount (a server without
    /// controller-manager creates none; on a cluster the create races the controller's, and
    /// either answer is ignored).
    pub async fn namespace(&mut self) {
        let ns = self.ns();
        self.setup(
            "POST",
            "/api/v1/namespaces",
            json!({"metadata": {"name": ns}}),
        )
        .await;
        self.setup(
            "POST",
            &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
            json!({"metadata": {"name": "default"}}),
        )
        .await;
    }
}
