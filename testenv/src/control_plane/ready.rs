//! Waiting for the control plane's servers: the API server until `/readyz` says `ok`, the
//! controller-manager until its controllers work; either wait ends early, with the server's log,
//! when a server exits.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client};

use super::process::Server;

/// How often readiness is asked: short, since every control plane of a test run waits here.
const POLL: Duration = Duration::from_millis(50);
/// How long one question may take.
const ASK_LIMIT: Duration = Duration::from_secs(2);
/// How many lines of a failed server's log an error quotes.
const LOG_LINES: usize = 30;

/// Why a server is not ready.
#[derive(Debug)]
pub(crate) enum NotReady {
    /// A server exited.
    Exited {
        /// What it said before it exited.
        message: String,
        /// Whether it could not listen on its port (another process took it first).
        port_taken: bool,
    },
    /// The deadline passed.
    Timeout(String),
}

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exited { message, .. } | Self::Timeout(message) => f.write_str(message),
        }
    }
}

/// Waits until the API server answers `/readyz` with `ok`, for at most `timeout`.
pub(crate) async fn api_server(
    client: &Client,
    servers: &mut [&mut Server],
    timeout: Duration,
) -> Result<(), NotReady> {
    until(
        servers,
        timeout,
        "kube-apiserver's /readyz to say ok",
        || {
            let client = client.clone();
            async move {
                let request = http::Request::get("/readyz")
                    .body(Vec::new())
                    .map_err(|e| e.to_string())?;
                let answer = client
                    .request_text(request)
                    .await
                    .map_err(|e| e.to_string())?;
                if answer.trim() == "ok" {
                    Ok(())
                } else {
                    Err(answer)
                }
            }
        },
    )
    .await
}

/// Waits until the controller-manager's root-CA publisher has written `kube-root-ca.crt` into
/// the `default` namespace (its controllers start after their caches synced: a few seconds).
pub(crate) async fn controller_manager(
    client: &Client,
    server: &mut Server,
    timeout: Duration,
) -> Result<(), NotReady> {
    let what = "kube-controller-manager to publish kube-root-ca.crt in namespace default";
    until(&mut [server], timeout, what, || {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        async move {
            match api.get_opt("kube-root-ca.crt").await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err("not yet".to_owned()),
                Err(error) => Err(error.to_string()),
            }
        }
    })
    .await
}

/// Asks `ready` every [`POLL`] until it is `Ok`; fails when a server exits or `timeout` passes
/// (on the wall clock: the caller's runtime may have a paused one).
async fn until<F, Fut>(
    servers: &mut [&mut Server],
    timeout: Duration,
    what: &str,
    mut ready: F,
) -> Result<(), NotReady>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        let last = match tokio::time::timeout(ASK_LIMIT, ready()).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(last)) => last,
            Err(_) => format!("no answer within {ASK_LIMIT:?}"),
        };
        for server in servers.iter_mut() {
            if let Some(status) = server.exited() {
                return Err(NotReady::Exited {
                    message: format!(
                        "{} exited ({status}) while waiting for {what}; the end of its log:\n{}",
                        server.name(),
                        server.log_tail(LOG_LINES)
                    ),
                    port_taken: server.port_was_taken(),
                });
            }
        }
        if Instant::now() >= deadline {
            return Err(NotReady::Timeout(format!(
                "timed out after {timeout:?} waiting for {what} (last: {last})"
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}
