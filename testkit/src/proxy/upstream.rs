//! The server behind the proxy, reached through kube's own client built from the server's
//! configuration: its URL, its CA for TLS, its credentials (token, client certificate, exec
//! plugin). A request that carries its own `Authorization` is forwarded with it, unchanged,
//! through a client without credentials (so a test's ServiceAccount token keeps its
//! identity); any other request gets the configuration's credentials.
//!
//! Neither client retries (kube's retry of 429, 503 and 504 would hide the server's answers
//! from the client behind the proxy), and neither times out reads (watches stay open as long
//! as the server keeps them).

use bytes::Bytes;
use http::{HeaderMap, Request, Response, header};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::ListParams;
use kube::{Api, Client};

use crate::fault::FaultError;

/// Request and response headers that belong to one connection, not to the message: never
/// forwarded. `accept-encoding` is dropped too, so answers come uncompressed and the proxy
/// can see their events.
const HOP_BY_HOP: [header::HeaderName; 8] = [
    header::CONNECTION,
    header::HeaderName::from_static("keep-alive"),
    header::HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HOST,
];

/// The server behind the proxy.
pub(crate) struct Upstream {
    with_credentials: Client,
    without_credentials: Client,
}

impl Upstream {
    /// Clients of the server `config` describes.
    pub fn new(mut config: kube::Config) -> Result<Self, FaultError> {
        config.default_retry = false;
        config.read_timeout = None;
        let mut bare = config.clone();
        bare.auth_info = Default::default();
        let client = |config| {
            Client::try_from(config)
                .map_err(|e| FaultError::Proxy(format!("a client of the server: {e}")))
        };
        Ok(Self {
            with_credentials: client(config)?,
            without_credentials: client(bare)?,
        })
    }

    /// Forwards a request (its method, path, query, end-to-end headers and body) and returns
    /// the server's answer, its body still streaming.
    pub async fn send(
        &self,
        parts: http::request::Parts,
        body: Bytes,
    ) -> Result<Response<kube::client::Body>, kube::Error> {
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let mut request = Request::new(kube::client::Body::from(body));
        *request.method_mut() = parts.method;
        *request.uri_mut() = path
            .parse()
            .map_err(|e: http::uri::InvalidUri| kube::Error::Service(e.into()))?;
        *request.headers_mut() = end_to_end(parts.headers);
        request.headers_mut().remove(header::ACCEPT_ENCODING);
        let client = if request.headers().contains_key(header::AUTHORIZATION) {
            &self.without_credentials
        } else {
            &self.with_credentials
        };
        let mut response = client.send(request).await?;
        let headers = std::mem::take(response.headers_mut());
        *response.headers_mut() = end_to_end(headers);
        Ok(response)
    }

    /// The JSON document at `path` (discovery), asked with the configuration's credentials.
    pub async fn get_json(&self, path: &str) -> Result<serde_json::Value, kube::Error> {
        let request = Request::get(path)
            .body(Vec::new())
            .map_err(|e| kube::Error::Service(e.into()))?;
        self.with_credentials.request(request).await
    }

    /// The server's current resourceVersion (of a quorum list, as a number).
    pub async fn current_resource_version(&self) -> Result<u64, FaultError> {
        let api: Api<Namespace> = Api::all(self.with_credentials.clone());
        let list = api
            .list_metadata(&ListParams::default().limit(1))
            .await
            .map_err(|e| FaultError::Proxy(format!("the server's resourceVersion: {e}")))?;
        let rv = list.metadata.resource_version.unwrap_or_default();
        rv.parse()
            .map_err(|e| FaultError::Proxy(format!("the server's resourceVersion {rv:?}: {e}")))
    }
}

/// `headers` without the hop-by-hop ones.
fn end_to_end(mut headers: HeaderMap) -> HeaderMap {
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
    headers
}
