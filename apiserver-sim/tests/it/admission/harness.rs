//! A small HTTPS webhook server for the admission and conversion tests: a certificate
//! authority and a serving certificate made with rcgen, rustls, hyper; each request is
//! recorded and answered by the test's handler (after an optional delay, in Tokio time).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// What the webhook answers to one request.
pub struct Reply {
    /// HTTP status.
    pub code: u16,
    /// Body.
    pub body: Value,
    /// Wait this long first (Tokio time).
    pub delay: Option<Duration>,
}

impl Reply {
    pub fn ok(body: Value) -> Self {
        Reply {
            code: 200,
            body,
            delay: None,
        }
    }
}

type Handler = Arc<dyn Fn(&str, &Value) -> Reply + Send + Sync>;

/// A running webhook server.
pub struct WebhookServer {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// base64 of the CA's PEM, for `caBundle`.
    pub ca_bundle: String,
    /// base64 of another CA's PEM (one that did not sign the server's certificate).
    pub wrong_ca_bundle: String,
    /// Every request received: path (with query) and body.
    pub requests: Arc<Mutex<Vec<(String, Value)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn ca() -> (rcgen::Issuer<'static, rcgen::KeyPair>, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("ca cert");
    (rcgen::Issuer::new(params, key), STANDARD.encode(cert.pem()))
}

impl WebhookServer {
    /// Starts a server whose certificate is valid for 127.0.0.1, localhost and
    /// `hook.webhooks.svc`, answering with `handler(path, request)`.
    pub async fn start(handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static) -> Self {
        let (issuer, ca_bundle) = ca();
        let (_, wrong_ca_bundle) = ca();
        let names = vec![
            "127.0.0.1".to_string(),
            "localhost".to_string(),
            "hook.webhooks.svc".to_string(),
        ];
        let params = rcgen::CertificateParams::new(names).expect("params");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &issuer).expect("server cert");
        let chain = vec![CertificateDer::from(cert.der().to_vec())];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        Self::serve(chain, key, ca_bundle, wrong_ca_bundle, handler).await
    }

    /// Starts a server presenting a certificate and key given as PEM (e.g. made with
    /// OpenSSL); `ca_bundle` is the PEM `caBundle` a webhook configuration would carry.
    pub async fn start_with_pem(
        cert_pem: &[u8],
        key_pem: &[u8],
        ca_bundle: &[u8],
        handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static,
    ) -> Self {
        use rustls::pki_types::pem::PemObject;
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<_, _>>()
            .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(key_pem).expect("key PEM");
        let (_, wrong_ca_bundle) = ca();
        Self::serve(
            chain,
            key,
            STANDARD.encode(ca_bundle),
            wrong_ca_bundle,
            handler,
        )
        .await
    }

    async fn serve(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        ca_bundle: String,
        wrong_ca_bundle: String,
        handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("https://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                let handler = handler.clone();
                let recorded = recorded.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let handler = handler.clone();
                        let recorded = recorded.clone();
                        async move {
                            let path = req
                                .uri()
                                .path_and_query()
                                .map(|p| p.to_string())
                                .unwrap_or_default();
                            let body = req.into_body().collect().await.map(|b| b.to_bytes());
                            let body: Value = body
                                .ok()
                                .and_then(|b| serde_json::from_slice(&b).ok())
                                .unwrap_or(Value::Null);
                            recorded.lock().push((path.clone(), body.clone()));
                            let reply = handler(&path, &body);
                            if let Some(d) = reply.delay {
                                tokio::time::sleep(d).await;
                            }
                            let bytes =
                                Bytes::from(serde_json::to_vec(&reply.body).unwrap_or_default());
                            let mut resp = hyper::Response::new(Full::new(bytes));
                            *resp.status_mut() = http::StatusCode::from_u16(reply.code)
                                .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
                            resp.headers_mut().insert(
                                http::header::CONTENT_TYPE,
                                http::HeaderValue::from_static("application/json"),
                            );
                            Ok::<_, Infallible>(resp)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        WebhookServer {
            url,
            ca_bundle,
            wrong_ca_bundle,
            requests,
            task,
        }
    }

    /// The `AdmissionReview` requests received on a path (without query).
    pub fn reviews(&self, path: &str) -> Vec<Value> {
        self.requests
            .lock()
            .iter()
            .filter(|(p, _)| p.split('?').next() == Some(path))
            .map(|(_, b)| b["request"].clone())
            .collect()
    }

    /// `clientConfig` calling this server at `path` by URL.
    pub fn client_config(&self, path: &str) -> Value {
        json!({"url": format!("{}{path}", self.url), "caBundle": self.ca_bundle})
    }
}

/// A response admitting the request, with extra fields merged into `response`.
pub fn admit(review: &Value, extra: Value) -> Value {
    let mut response = json!({"uid": review["request"]["uid"], "allowed": true});
    if let (Some(r), Some(e)) = (response.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            r.insert(k.clone(), v.clone());
        }
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// A response denying the request with this `status`.
pub fn deny(review: &Value, status: Value) -> Value {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
           "response": {"uid": review["request"]["uid"], "allowed": false, "status": status}})
}

/// A response admitting the request with a JSON patch.
pub fn patch(review: &Value, ops: Value) -> Value {
    let patch = STANDARD.encode(serde_json::to_vec(&ops).unwrap_or_default());
    admit(review, json!({"patch": patch, "patchType": "JSONPatch"}))
}

/// One webhook entry of a configuration.
pub fn webhook(name: &str, client_config: Value, rules: Value) -> Value {
    json!({"name": name, "clientConfig": client_config, "rules": rules,
           "sideEffects": "None", "admissionReviewVersions": ["v1"]})
}

/// Rules for one resource of the core group (`configmaps`), every operation.
pub fn rules(resource: &str) -> Value {
    json!([{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": [resource]}])
}

/// A webhook configuration object.
pub fn configuration(kind: &str, name: &str, webhooks: Vec<Value>) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "webhooks": webhooks})
}
