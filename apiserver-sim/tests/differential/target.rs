//! The two servers a probe is sent to: the simulator (started here, RBAC on like a real
//! cluster) or the real server of a kubeconfig; raw HTTP requests and watch streams through
//! `kube::Client`, so TLS and credentials come from the kubeconfig as for any client.

use std::time::Duration;

use apiserver_sim::ApiServer;
use bytes::Bytes;
use http::{Request, header};
use http_body_util::BodyExt;
use kube::client::Body;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long the cluster simulator's kubelet takes to run a bound pod (and a batch pod to
/// exit after that): short, since the scenarios await every end state and CI waits for it.
const WORKLOAD_DELAY: Duration = Duration::from_millis(150);

/// The User-Agent of every probe (the default field manager is derived from it).
pub const USER_AGENT: &str = "kube-rt-differential/0.1 (linux/amd64)";

/// A response as a probe records it.
#[derive(Debug, Clone)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` (empty when absent).
    pub content_type: String,
    /// `Warning` headers.
    pub warnings: Vec<String>,
    /// The body.
    pub body: Bytes,
}

impl Resp {
    /// The body as JSON (`null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A server under test.
pub struct Target {
    /// Which one (`sim` or `real`).
    pub name: &'static str,
    config: kube::Config,
    client: kube::Client,
    /// The simulator, when this is it (kept here to keep it serving).
    _server: Option<ApiServer>,
}

impl Target {
    /// A fresh simulator with RBAC on.
    pub async fn simulator() -> Result<Self, String> {
        let sim = ApiServer::builder()
            .rbac(true)
            .start()
            .await
            .map_err(|e| e.to_string())?;
        let kubeconfig = sim.kubeconfig().map_err(|e| e.to_string())?;
        Self::of("sim", kubeconfig, Some(sim)).await
    }

    /// A fresh simulator standing in for a whole cluster: RBAC and
    /// `OwnerReferencesPermissionEnforcement` on, the workload simulator (a pod is running and
    /// ready `WORKLOAD_DELAY` after it is bound, a batch pod exits as long after that), and each
    /// namespace's `default` ServiceAccount and `kube-root-ca.crt` (a CA made for the run).
    pub async fn cluster_simulator() -> Result<Self, String> {
        let mut params =
            rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| e.to_string())?;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
        let ca = params.self_signed(&key).map_err(|e| e.to_string())?;
        let sim = ApiServer::builder()
            .rbac(true)
            .owner_references_permission_enforcement(true)
            .workload_simulator(WORKLOAD_DELAY)
            .namespace_defaults(ca.pem())
            .start()
            .await
            .map_err(|e| e.to_string())?;
        let kubeconfig = sim.kubeconfig().map_err(|e| e.to_string())?;
        Self::of("sim", kubeconfig, Some(sim)).await
    }

    /// The server of a kubeconfig file.
    pub async fn real(path: &str) -> Result<Self, String> {
        let kubeconfig = Kubeconfig::read_from(path).map_err(|e| format!("{path}: {e}"))?;
        Self::of("real", kubeconfig, None).await
    }

    async fn of(
        name: &'static str,
        kubeconfig: Kubeconfig,
        server: Option<ApiServer>,
    ) -> Result<Self, String> {
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| e.to_string())?;
        let client = kube::Client::try_from(config.clone()).map_err(|e| e.to_string())?;
        Ok(Self {
            name,
            config,
            client,
            _server: server,
        })
    }

    /// A client of the same server authenticating with `token`.
    pub fn with_token(&self, token: &str) -> Result<kube::Client, String> {
        let mut config = self.config.clone();
        config.auth_info.token = Some(token.to_string().into());
        config.auth_info.token_file = None;
        config.auth_info.client_certificate_data = None;
        config.auth_info.client_key_data = None;
        kube::Client::try_from(config).map_err(|e| e.to_string())
    }

    /// The admin client.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }
}

fn request(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Request<Body>, String> {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header(header::USER_AGENT, USER_AGENT);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body)).map_err(|e| e.to_string())
}

/// Sends one request and reads the whole answer (10 s at most).
pub async fn send(
    client: &kube::Client,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Resp, String> {
    let req = request(method, path, headers, body)?;
    let fut = async {
        let resp = client.send(req).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let warnings = resp
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Resp {
            status,
            content_type,
            warnings,
            body,
        })
    };
    tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .map_err(|_| format!("{method} {path}: no answer in 10 s"))?
}

/// Opens a watch and reads its JSON events until `done` says so, the stream ends or 8 s pass.
pub async fn watch(
    client: &kube::Client,
    path: &str,
    done: impl Fn(&[serde_json::Value]) -> bool,
) -> Result<(u16, Vec<serde_json::Value>), String> {
    let req = request("GET", path, &[], Vec::new())?;
    let resp = tokio::time::timeout(Duration::from_secs(10), client.send(req))
        .await
        .map_err(|_| format!("watch {path}: no answer"))?
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut buf = Vec::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(8);
    while !done(&events) {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(None) | Err(_) => break,
        };
        if let Ok(data) = frame.into_data() {
            buf.extend_from_slice(&data);
        }
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            if let Ok(v) = serde_json::from_slice(&line) {
                events.push(v);
            }
        }
    }
    if status != 200 && events.is_empty() && !buf.is_empty() {
        events.push(serde_json::from_slice(&buf).unwrap_or(serde_json::Value::Null));
    }
    Ok((status, events))
}
