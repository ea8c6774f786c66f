//! Health and readiness probes, and the HTTP server that serves them with `/metrics`.
//!
//! `/healthz` (liveness) and `/readyz` (readiness) run named checks in the order they were
//! added and answer `200 ok` when all pass. When one fails, the body lists every check
//! (`[+]name ok` / `[-]name failed: reason`) and the status is `500 Internal Server Error` if a
//! user check failed, or `503 Service Unavailable` if only the manager's own readiness
//! conditions are unmet (caches not synced yet, leader elector not running). `/healthz/NAME`
//! and `/readyz/NAME` run one check. `?verbose` lists the checks on success too.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// A health or readiness check: `Ok(())` when healthy, otherwise the reason.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The always-passing check controller-runtime calls `ping`.
pub fn ping() -> Result<(), String> {
    Ok(())
}

struct NamedCheck {
    name: String,
    check: Check,
    /// The status when this check fails: 500 for user checks, 503 for built-in readiness.
    failure: StatusCode,
}

/// The manager's registered checks.
#[derive(Default)]
pub(crate) struct Probes {
    healthz: Mutex<Vec<NamedCheck>>,
    readyz: Mutex<Vec<NamedCheck>>,
}

/// Which probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Healthz,
    Readyz,
}

impl Probe {
    fn path(self) -> &'static str {
        match self {
            Self::Healthz => "healthz",
            Self::Readyz => "readyz",
        }
    }
}

impl Probes {
    fn list(&self, probe: Probe) -> &Mutex<Vec<NamedCheck>> {
        match probe {
            Probe::Healthz => &self.healthz,
            Probe::Readyz => &self.readyz,
        }
    }

    /// Adds a check; fails if the name is taken for this probe.
    pub(crate) fn add(
        &self,
        probe: Probe,
        name: &str,
        check: Check,
        builtin: bool,
    ) -> Result<(), String> {
        let mut checks = self.list(probe).lock();
        if checks.iter().any(|existing| existing.name == name) {
            return Err(format!(
                "a {} check named `{name}` already exists",
                probe.path()
            ));
        }
        checks.push(NamedCheck {
            name: name.to_owned(),
            check,
            failure: if builtin {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            },
        });
        Ok(())
    }

    /// Runs the checks of `probe` (only `only`, if given): the status and the body.
    pub(crate) fn run(
        &self,
        probe: Probe,
        only: Option<&str>,
        verbose: bool,
    ) -> (StatusCode, String) {
        let checks: Vec<(String, Check, StatusCode)> = self
            .list(probe)
            .lock()
            .iter()
            .filter(|named| only.is_none_or(|only| named.name == only))
            .map(|named| (named.name.clone(), Arc::clone(&named.check), named.failure))
            .collect();
        if let Some(only) = only
            && checks.is_empty()
        {
            return (
                StatusCode::NOT_FOUND,
                format!("no {} check named `{only}`\n", probe.path()),
            );
        }
        let mut status = StatusCode::OK;
        let mut body = String::new();
        for (name, check, failure) in &checks {
            match check() {
                Ok(()) => {
                    let _ = writeln!(body, "[+]{name} ok");
                }
                Err(reason) => {
                    let _ = writeln!(body, "[-]{name} failed: {reason}");
                    if status != StatusCode::INTERNAL_SERVER_ERROR {
                        status = *failure;
                    }
                }
            }
        }
        if status == StatusCode::OK {
            if verbose {
                let _ = writeln!(body, "{} check passed", probe.path());
                (status, body)
            } else {
                (status, "ok".to_owned())
            }
        } else {
            let _ = writeln!(body, "{} check failed", probe.path());
            (status, body)
        }
    }
}

/// What one listener serves.
#[derive(Clone, Default)]
pub(crate) struct Endpoints {
    pub(crate) metrics: Option<Metrics>,
    pub(crate) probes: Option<Arc<Probes>>,
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
pub(crate) async fn bind(address: SocketAddr) -> Result<(TcpListener, SocketAddr), std::io::Error> {
    let listener = TcpListener::bind(address).await?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}

/// Serves `endpoints` on `listener` (HTTP/1.1) until `shutdown` fires; open connections are
/// closed then.
pub(crate) async fn serve(
    listener: TcpListener,
    endpoints: Endpoints,
    shutdown: CancellationToken,
) {
    let endpoints = Arc::new(endpoints);
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let endpoints = Arc::clone(&endpoints);
        connections.spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let response = endpoints.respond(&request);
                async move { Ok::<_, Infallible>(response) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "probe/metrics connection ended with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_failures_are_500_builtin_503() {
        let probes = Probes::default();
        probes
            .add(Probe::Readyz, "ping", Arc::new(ping), false)
            .unwrap();
        probes
            .add(
                Probe::Readyz,
                "caches",
                Arc::new(|| Err("not synced".into())),
                true,
            )
            .unwrap();
        let (status, body) = probes.run(Probe::Readyz, None, false);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(body.contains("[-]caches failed: not synced"));
        probes
            .add(Probe::Readyz, "db", Arc::new(|| Err("down".into())), false)
            .unwrap();
        assert_eq!(
            probes.run(Probe::Readyz, None, false).0,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(
            probes.run(Probe::Readyz, Some("ping"), false).0,
            StatusCode::OK
        );
        assert_eq!(
            probes.run(Probe::Readyz, Some("nope"), false).0,
            StatusCode::NOT_FOUND
        );
        assert!(
            probes
                .add(Probe::Readyz, "ping", Arc::new(ping), false)
                .is_err()
        );
    }
}
