//! The HTTP server of a manager's `/metrics`, `/healthz` and `/readyz` (HTTP/1.1, `GET` and
//! `HEAD` only): one listener per address, or one for both when the metrics and probe addresses
//! are equal.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::ops::health::{Probe, Probes};
use crate::ops::metrics::Metrics;
use crate::ops::serve::{accept_until, http1};

/// A server's address could not be bound.
#[derive(Debug)]
pub(crate) struct BindError {
    /// What the listener was for.
    pub(crate) what: &'static str,
    /// The address.
    pub(crate) address: SocketAddr,
    /// Why binding failed.
    pub(crate) source: std::io::Error,
}

/// Addresses the servers were bound to.
#[derive(Debug, Default)]
pub(crate) struct Bound {
    /// Where `/metrics` is served.
    pub(crate) metrics: Option<SocketAddr>,
    /// Where `/healthz` and `/readyz` are served.
    pub(crate) probes: Option<SocketAddr>,
}

/// Binds and spawns the servers of `/metrics` (on `metrics_address`, serving `metrics`) and of
/// the probes (on `probes_address`, serving `probes`; one listener when both addresses are
/// equal), recording each bound address in `addresses` as soon as it is bound. They stop with `stop`.
pub(crate) async fn start_servers(
    metrics_address: Option<SocketAddr>,
    metrics: &Metrics,
    probes_address: Option<SocketAddr>,
    probes: &Arc<Probes>,
    addresses: &Mutex<Bound>,
    stop: &CancellationToken,
) -> Result<(), BindError> {
    let mut listeners: Vec<(SocketAddr, Endpoints, &'static str)> = Vec::new();
    if let Some(address) = metrics_address {
        listeners.push((
            address,
            Endpoints {
                metrics: Some(metrics.clone()),
                probes: None,
            },
            "metrics",
        ));
    }
    if let Some(address) = probes_address {
        match listeners.iter_mut().find(|(bound, _, _)| *bound == address) {
            Some((_, endpoints, _)) => endpoints.probes = Some(Arc::clone(probes)),
            None => listeners.push((
                address,
                Endpoints {
                    metrics: None,
                    probes: Some(Arc::clone(probes)),
                },
                "health probes",
            )),
        }
    }
    for (address, endpoints, what) in listeners {
        let (listener, bound) = bind(address).await.map_err(|source| BindError {
            what,
            address,
            source,
        })?;
        {
            let mut addresses = addresses.lock();
            if endpoints.metrics.is_some() {
                addresses.metrics = Some(bound);
            }
            if endpoints.probes.is_some() {
                addresses.probes = Some(bound);
            }
        }
        tracing::info!(%bound, what, "serving");
        let endpoints = Arc::new(endpoints);
        tokio::spawn(accept_until(
            listener,
            stop.clone(),
            what,
            move |stream, _peer| {
                let endpoints = Arc::clone(&endpoints);
                http1(stream, what, move |request| {
                    let response = endpoints.respond(&request);
                    async move { response }
                })
            },
        ));
    }
    Ok(())
}

/// What one listener serves.
#[derive(Clone, Default)]
struct Endpoints {
    metrics: Option<Metrics>,
    probes: Option<Arc<Probes>>,
}

impl Endpoints {
    fn respond(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path();
        let verbose = request
            .uri()
            .query()
            .is_some_and(|query| query.split('&').any(|part| part == "verbose"));
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return text(
                StatusCode::METHOD_NOT_ALLOWED,
                "only GET is served\n".into(),
            );
        }
        if path == "/metrics"
            && let Some(metrics) = &self.metrics
        {
            let openmetrics = request
                .headers()
                .get(header::ACCEPT)
                .and_then(|accept| accept.to_str().ok())
                .is_some_and(|accept| accept.contains("application/openmetrics-text"));
            let (body, content_type) = if openmetrics {
                (
                    metrics.render_openmetrics(),
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )
            } else {
                (metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
            };
            return Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, content_type)
                .body(Full::new(Bytes::from(body)))
                .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
        }
        if let Some(probes) = &self.probes {
            for probe in [Probe::Healthz, Probe::Readyz] {
                let base = format!("/{}", probe.path());
                if path == base {
                    let (status, body) = probes.run(probe, None, verbose);
                    return text(status, body);
                }
                if let Some(name) = path.strip_prefix(&format!("{base}/")) {
                    let (status, body) = probes.run(probe, Some(name), verbose);
                    return text(status, body);
                }
            }
        }
        text(StatusCode::NOT_FOUND, "not found\n".into())
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// Binds `address`.
async fn bind(address: SocketAddr) -> Result<(TcpListener, SocketAddr), std::io::Error> {
    let listener = TcpListener::bind(address).await?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}
