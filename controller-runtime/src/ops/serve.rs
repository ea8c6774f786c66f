//! Serving HTTP/1.1 on a listener until shutdown — the one accept loop of the manager's
//! `/metrics` and probe servers and of the webhook server (which adds a TLS handshake per
//! connection).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long the loop waits after a failed accept (say, out of file descriptors) before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Accepts connections on `listener` until `shutdown`, each handled by `connection` on a task
/// of its own; the connections still open are closed when the loop ends. `what` names the
/// server in logs.
pub(crate) async fn accept_until<F, Fut>(
    listener: TcpListener,
    shutdown: CancellationToken,
    what: &'static str,
    connection: F,
) where
    F: Fn(TcpStream, SocketAddr) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        match accepted {
            Ok((stream, peer)) => {
                connections.spawn(connection(stream, peer));
            }
            Err(error) => {
                tracing::warn!(%error, server = what, "cannot accept a connection");
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

/// Serves HTTP/1.1 on one connection, answering each request with `respond`.
pub(crate) async fn http1<S, F, Fut>(stream: S, what: &'static str, respond: F)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let service = service_fn(move |request: Request<Incoming>| {
        let response = respond(request);
        async move { Ok::<_, Infallible>(response.await) }
    });
    if let Err(error) = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%error, server = what, "connection ended with an error");
    }
}
