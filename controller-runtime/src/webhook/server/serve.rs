//! The webhook server's connections: each accepted by the manager's shared accept loop, then a
//! TLS handshake (bounded in time) when serving HTTPS, then HTTP/1.1, until the server's
//! shutdown.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::ops::serve::{accept_until, http1};
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
    let serving = Arc::clone(&shared);
    accept_until(listener, shutdown, "webhook", move |stream, peer| {
        let shared = Arc::clone(&shared);
        let tls = tls.clone();
        async move {
            let respond = move |request| respond(Arc::clone(&shared), request);
            match tls {
                None => http1(stream, "webhook", respond).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => http1(stream, "webhook", respond).await,
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "webhook TLS handshake failed");
                        }
                        Err(_) => tracing::debug!(%peer, "webhook TLS handshake timed out"),
                    }
                }
            }
        }
    })
    .await;
    serving.serving.store(false, Ordering::SeqCst);
    tracing::info!("webhook server stopped");
}
