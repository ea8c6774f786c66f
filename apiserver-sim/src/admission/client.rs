//! The HTTPS client of webhook calls: one connection per call (rustls with the `ring`
//! provider, the certificate verified against the webhook's `caBundle` with Go's rules of
//! `crate::tls`), a JSON POST, a JSON answer, all within
//! the webhook's timeout (Tokio time).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use serde_json::Value;
use tokio::net::TcpStream;

use super::endpoints::Target;
use crate::faults::chaos::state::WebhookFault;
use crate::tls::verifier::GoVerifier;

/// Trusted roots: the certificates of a base64-encoded PEM `caBundle`, or the system's roots
/// when there is none (as Go's client without `CAData`). An undecodable bundle trusts nothing.
fn roots(ca_bundle: &str) -> Vec<crate::tls::cert::Cert> {
    if ca_bundle.trim().is_empty() {
        return crate::tls::roots::system().to_vec();
    }
    match STANDARD.decode(ca_bundle.trim()) {
        Ok(pem) => crate::tls::roots::from_pem(&pem),
        Err(_) => Vec::new(),
    }
}

/// A TLS failure in Go's words: a refused certificate with the verifier's `x509: ...` reason.
fn tls_error(e: &std::io::Error, verifier: &GoVerifier) -> String {
    match verifier.failure() {
        Some(reason) => format!("tls: failed to verify certificate: {reason}"),
        None => format!("tls: {e}"),
    }
}

/// An I/O error in Go's words (`connection refused`), else as the OS says it.
fn io_cause(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        std::io::ErrorKind::ConnectionReset => "connection reset by peer".into(),
        _ => e.to_string(),
    }
}

/// The message a non-2xx answer without a usable `Status` becomes.
fn http_error(code: u16, body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && let Some(msg) = v.get("message").and_then(Value::as_str)
    {
        return msg.to_string();
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        format!(
            "the server responded with the status code {code} but did not return more information"
        )
    } else {
        format!("an error on the server ({text:?}) has prevented the request from succeeding")
    }
}

/// A TLS connection to the target, its certificate verified against the `caBundle` with Go's
/// rules (`crate::tls`).
async fn connect(target: &Target) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(GoVerifier::new(roots(&target.ca_bundle), provider.clone()));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let addr = format!("{}:{}", target.host, target.port);
    let tcp = TcpStream::connect(addr.as_str())
        .await
        .map_err(|e| format!("dial tcp {addr}: connect: {}", io_cause(&e)))?;
    let name = ServerName::try_from(target.server_name.clone())
        .map_err(|e| format!("invalid server name {:?}: {e}", target.server_name))?;
    connector
        .connect(name, tcp)
        .await
        .map_err(|e| tls_error(&e, &verifier))
}

async fn call(target: &Target, body: Bytes) -> Result<Value, String> {
    let tls = connect(target).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let request = Request::post(target.path.as_str())
        .header(
            header::HOST,
            format!("{}:{}", target.server_name, target.port),
        )
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, */*")
        .header(header::USER_AGENT, "kube-apiserver-admission")
        .body(Full::new(body))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let code = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if !(200..300).contains(&code) {
        return Err(http_error(code, &bytes));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("unable to decode the response: {e}"))
}

/// Sends the head of the request, then drops the connection before any answer (the webhook
/// sees a request cut short): chaos mode's dropped call. The error is the client's `EOF`.
async fn drop_call(target: &Target, body: &Bytes) -> Result<Value, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut tls = connect(target).await?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        target.path,
        target.server_name,
        target.port,
        body.len()
    );
    let _ = tls.write_all(head.as_bytes()).await;
    let _ = tls.write_all(&body[..body.len() / 2]).await;
    let _ = tls.flush().await;
    drop(tls);
    Err("EOF".to_owned())
}

/// POSTs `body` to the target with `?timeout=<s>s` (as a real server tells the webhook its
/// deadline) and decodes the JSON answer. Errors read like Go's client:
/// `Post "<url>?timeout=10s": <cause>` (`context deadline exceeded` on timeout). A chaos
/// `fault` fails the call as a 500 would, drops it mid-request, or delays it (the delay
/// counts against the timeout).
pub async fn post(
    target: &Target,
    body: &Value,
    timeout: Duration,
    fault: Option<WebhookFault>,
) -> Result<Value, String> {
    let secs = timeout.as_secs().max(1);
    let sep = if target.path.contains('?') { '&' } else { '?' };
    let mut target = target.clone();
    target.path = format!("{}{sep}timeout={secs}s", target.path);
    let shown = format!("{}{sep}timeout={secs}s", target.display_url);
    let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
    let attempt = async {
        match fault {
            None => call(&target, bytes).await,
            Some(WebhookFault::Error) => Err(http_error(500, b"injected fault")),
            Some(WebhookFault::Drop) => drop_call(&target, &bytes).await,
            Some(WebhookFault::Slow(delay)) => {
                tokio::time::sleep(delay).await;
                call(&target, bytes).await
            }
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("Post {shown:?}: {e}")),
        Err(_) => Err(format!("Post {shown:?}: context deadline exceeded")),
    }
}
