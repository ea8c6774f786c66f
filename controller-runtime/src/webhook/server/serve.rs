//! The accept loop: every connection is served on its own task — TLS handshake (bounded in
//! time) when serving HTTPS, then HTTP/1.1 — until the server's shutdown.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http::Request;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::webhook::server::http::respond;
use crate::webhook::server::shared::Shared;

/// How long a client may take to complete its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections on `listener` until `shutdown`; open connections are closed then.
pub(super) async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "webhook server cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        let tls = tls.clone();
        connections.spawn(async move {
            match tls {
                None => connection(stream, shared).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => connection(stream, shared).await,
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "webhook TLS handshake failed");
                        }
                        Err(_) => tracing::debug!(%peer, "webhook TLS handshake timed out"),
                    }
                }
            }
        });
    }
    shared.serving.store(false, Ordering::SeqCst);
    tracing::info!("webhook server stopped");
}

/// Serves HTTP/1.1 on one connection.
async fn connection<S>(stream: S, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request: Request<Incoming>| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, Infallible>(respond(shared, request).await) }
    });
    if let Err(error) = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%error, "webhook connection ended with an error");
    }
}
