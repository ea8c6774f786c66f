//! Helpers of the webhook tests: a CA that issues serving certificates into a directory, a
//! client that posts reviews over TLS (trusting that CA) or plain HTTP, and review bodies.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use controller_runtime::webhook::{WebhookServer, WebhookServerConfig};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A certificate authority for one test.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
    der: CertificateDer<'static>,
}

impl TestCa {
    pub fn new() -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "webhook test CA");
        let cert = params.self_signed(&key).unwrap();
        Self {
            pem: cert.pem(),
            der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA's certificate, PEM (a webhook configuration's `caBundle`).
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Issues a serving certificate for `localhost` and 127.0.0.1 into `dir` (`tls.crt`,
    /// `tls.key`); returns its DER.
    pub fn issue(&self, dir: &Path, common_name: &str) -> CertificateDer<'static> {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        // Written aside then renamed, as the kubelet swaps a mounted Secret's files.
        for (name, contents) in [("tls.crt", cert.pem()), ("tls.key", key.serialize_pem())] {
            let staging = dir.join(format!(".{name}.tmp"));
            std::fs::write(&staging, contents).unwrap();
            std::fs::rename(&staging, dir.join(name)).unwrap();
        }
        cert.der().clone()
    }

    /// A client configuration trusting only this CA.
    pub fn client_config(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }
}

/// A server on an ephemeral port of 127.0.0.1 with a certificate of `ca` in a temp dir.
pub struct TestServer {
    pub server: WebhookServer,
    pub addr: SocketAddr,
    pub ca: TestCa,
    pub dir: tempfile::TempDir,
    stop: CancellationToken,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Settings for a test server: loopback, free port, certificates in `dir`.
pub fn test_config(dir: &Path) -> WebhookServerConfig {
    WebhookServerConfig::new()
        .host(Ipv4Addr::LOCALHOST.into())
        .port(0)
        .cert_dir(dir)
}

impl TestServer {
    /// Starts `server` (built from [`test_config`] on `dir`) after issuing its certificate.
    pub async fn start_with(
        ca: TestCa,
        dir: tempfile::TempDir,
        server: WebhookServer,
    ) -> TestServer {
        let stop = CancellationToken::new();
        let addr = server.start(stop.clone()).await.unwrap();
        TestServer {
            server,
            addr,
            ca,
            dir,
            stop,
        }
    }

    /// A server with the default settings, configured by `register`.
    pub async fn start(register: impl FnOnce(&WebhookServer)) -> TestServer {
        let ca = TestCa::new();
        let dir = tempfile::tempdir().unwrap();
        ca.issue(dir.path(), "webhook-1");
        let server = WebhookServer::new(test_config(dir.path()));
        register(&server);
        Self::start_with(ca, dir, server).await
    }

    /// Posts a JSON `body` to `path`.
    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.post_raw(
            path,
            Some("application/json"),
            serde_json::to_vec(body).unwrap(),
        )
        .await
    }

    /// Posts raw bytes with `content_type`.
    pub async fn post_raw(&self, path: &str, content_type: Option<&str>, body: Vec<u8>) -> Reply {
        request_tls(
            self.addr,
            &self.ca.client_config(),
            "POST",
            path,
            content_type,
            body,
        )
        .await
    }
}

/// An HTTP answer and the certificate the server presented.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub peer: Option<CertificateDer<'static>>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The admission response of the answer.
    pub fn response(&self) -> Value {
        self.json()["response"].clone()
    }
}

/// One request over a new TLS connection.
pub async fn request_tls(
    addr: SocketAddr,
    client: &Arc<rustls::ClientConfig>,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Reply {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::clone(client));
    let tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let peer = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first().cloned());
    let mut reply = exchange(tls, method, path, content_type, body).await;
    reply.peer = peer;
    reply
}

/// One request over a new plain connection.
pub async fn request_plain(addr: SocketAddr, path: &str, body: Vec<u8>) -> Reply {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    exchange(tcp, "POST", path, Some("application/json"), body).await
}

async fn exchange<S>(
    stream: S,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Reply
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, "localhost");
    if let Some(content_type) = content_type {
        request = request.header(http::header::CONTENT_TYPE, content_type);
    }
    let response = sender
        .send_request(request.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        body,
        peer: None,
    }
}

/// An `admission.k8s.io/v1` review of a core/v1 ConfigMap.
pub fn review(operation: &str, object: Option<Value>, old_object: Option<Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "settings",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters"]},
            "object": object,
            "oldObject": old_object,
            "dryRun": false,
        },
    })
}

/// A ConfigMap as JSON.
pub fn config_map(data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default", "creationTimestamp": null},
        "data": data,
    })
}
