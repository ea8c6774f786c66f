//! Restarting the real API server mid-run, and a real 410.
//!
//! - `KUBE_RT_TEST_RESTART`: a shell command that restarts the kube-apiserver (and its etcd)
//!   keeping the data, run with `sh -c`;
//! - `KUBE_RT_TEST_ETCD`: the base URL of that etcd's client port (its JSON gateway). Before
//!   the restart etcd is compacted to its current revision (`/v3/kv/range` for the revision,
//!   `/v3/kv/compaction` with `physical`), so that after the restart the server's watch cache
//!   starts at a revision newer than every resourceVersion the clients hold, and etcd itself
//!   has no history before it: a watch resumed from an older resourceVersion gets a real
//!   410 "too old resource version" and its client must relist.
//!
//! [`probe`] proves it: from a resourceVersion taken before the compaction, a watch and an
//! exact list are both answered with 410 after the restart.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, Patch, PatchParams, VersionMatch, WatchEvent, WatchParams};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::Cluster;

/// The restart command's variable.
pub const RESTART_ENV: &str = "KUBE_RT_TEST_RESTART";
/// The etcd URL's variable.
pub const ETCD_ENV: &str = "KUBE_RT_TEST_ETCD";

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The restart command, if the user named one.
pub fn command_from_env() -> Option<String> {
    var(RESTART_ENV)
}

/// The etcd base URL, if the user named one (`http://host:port`).
pub fn etcd_from_env() -> Option<String> {
    var(ETCD_ENV).map(|url| url.trim_end_matches('/').to_owned())
}

/// Runs `command` with `sh -c`; how long it took, or its exit status and output.
pub async fn run_command(command: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let command = command.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdin(std::process::Stdio::null())
            .output()
    })
    .await
    .map_err(|e| format!("restart command: {e}"))?
    .map_err(|e| format!("restart command: {e}"))?;
    if output.status.success() {
        return Ok(started.elapsed());
    }
    let tail = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    };
    Err(format!(
        "{RESTART_ENV} exited with {}:\n{}\n{}",
        output.status,
        tail(&output.stdout),
        tail(&output.stderr)
    ))
}

/// Microseconds since the Unix epoch, as text (for annotations).
fn now_us_text() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
        .to_string()
}

/// POSTs `body` to `path` of etcd's JSON gateway at `base` (`http://host:port`); the answer.
async fn etcd_post(base: &str, path: &str, body: &Value) -> Result<Value, String> {
    let authority = base
        .strip_prefix("http://")
        .ok_or_else(|| format!("{ETCD_ENV} must be an http:// URL, not {base:?}"))?;
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("etcd {authority}: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("etcd {authority}: {e}"))?;
    let driving = tokio::spawn(connection);
    let request = http::Request::post(path)
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("etcd {path}: {e}"))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("etcd {path}: {e}"))?
        .to_bytes();
    driving.abort();
    if !status.is_success() {
        return Err(format!(
            "etcd {path}: {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("etcd {path}: {e}"))
}

/// Compacts etcd at `base` to its current revision (physically), after one write of its own
/// in the run's namespace (an annotation on its ServiceAccount `account`), so that the
/// revision compacted to is newer than any resourceVersion read before the call (etcd keeps the
/// compacted revision itself readable); that revision.
pub async fn compact(cluster: &Cluster, account: &str, base: &str) -> Result<i64, String> {
    let at = now_us_text();
    let marker = json!({"metadata": {"annotations": {"kube-rt.test/compacted-at-us": at}}});
    cluster
        .api::<k8s_openapi::api::core::v1::ServiceAccount>()
        .patch(account, &PatchParams::default(), &Patch::Merge(marker))
        .await
        .map_err(|e| format!("writing before the compaction: {e}"))?;
    // The key "\0" (base64 "AA=="): any range answers with the store's current revision.
    let range = etcd_post(base, "/v3/kv/range", &json!({"key": "AA=="})).await?;
    let revision = match &range["header"]["revision"] {
        // The gateway writes 64-bit integers as strings.
        Value::String(s) => s.parse::<i64>().ok(),
        other => other.as_i64(),
    }
    .ok_or_else(|| format!("etcd /v3/kv/range: no header.revision in {range}"))?;
    etcd_post(
        base,
        "/v3/kv/compaction",
        &json!({"revision": revision, "physical": true}),
    )
    .await?;
    Ok(revision)
}

/// What the server answered, after the restart, to requests from a resourceVersion taken before
/// the compaction.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The resourceVersion asked for.
    pub from: String,
    /// The watch's first answer (`410 …` when expired).
    pub watch: String,
    /// The exact list's answer.
    pub exact_list: String,
    /// Both were 410.
    pub gone: bool,
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "from resourceVersion {}: watch → {}; exact list → {}",
            self.from, self.watch, self.exact_list
        )
    }
}

/// The resourceVersion of a list of the run's ConfigMaps: the one to probe from later.
pub async fn list_version(cluster: &Cluster) -> Result<String, String> {
    let list = cluster
        .api::<ConfigMap>()
        .list(&ListParams::default().limit(1))
        .await
        .map_err(|e| format!("listing ConfigMaps: {e}"))?;
    list.metadata
        .resource_version
        .ok_or_else(|| "a list without a resourceVersion".to_owned())
}

/// Opens a watch and an exact list of the run's ConfigMaps from `from`, and says what they got.
pub async fn probe(cluster: &Cluster, from: &str) -> Probe {
    let api = cluster.api::<ConfigMap>();
    let watch = match api.watch(&WatchParams::default().timeout(5), from).await {
        Err(kube::Error::Api(e)) => (e.code == 410, format!("{} {}", e.code, e.message)),
        Err(e) => (false, format!("error {e}")),
        Ok(stream) => {
            let mut stream = Box::pin(stream);
            match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
                Ok(Some(Ok(WatchEvent::Error(e)))) => {
                    (e.code == 410, format!("{} {}", e.code, e.message))
                }
                Ok(Some(Ok(event))) => (false, format!("an event: {event:?}")),
                Ok(Some(Err(e))) => (false, format!("stream error {e}")),
                Ok(None) => (false, "closed without an event".to_owned()),
                Err(_) => (false, "no event within 10 s".to_owned()),
            }
        }
    };
    let params = ListParams::default().at(from).matching(VersionMatch::Exact);
    let exact_list = match api.list(&params).await {
        Err(kube::Error::Api(e)) => (e.code == 410, format!("{} {}", e.code, e.message)),
        Err(e) => (false, format!("error {e}")),
        Ok(list) => (false, format!("200, {} items", list.items.len())),
    };
    Probe {
        from: from.to_owned(),
        gone: watch.0 && exact_list.0,
        watch: watch.1,
        exact_list: exact_list.1,
    }
}
