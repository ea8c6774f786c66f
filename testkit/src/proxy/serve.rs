//! The proxy's front: the accept loop, one HTTP/1.1 connection task per client connection
//! (cut when the proxy restarts or stops), and each request's way through — counted, held
//! (a watch, while a test holds the watches), matched against the pending faults, the
//! watch-list switch and the played compaction, answered by the proxy or forwarded, and its
//! answer shaped (a watch's also carrying the bookmarks a test asks for).

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::answers;
use super::body::{ProxyBody, Shape, WatchBody, shaped};
use super::bookmarks::Bookmarks;
use super::classify::{classify, flag};
use super::compaction;
use super::counts::OpenWatch;
use super::framing::Framing;
use super::state::State;
use super::watch_list::{self, Treatment};
use crate::fault::Effect;

/// A connection closed on purpose (a fault), or because the server could not be reached.
#[derive(Debug, thiserror::Error)]
#[error("connection closed by the fault proxy")]
struct Closed;

/// Accepts connections until the proxy stops.
pub(crate) async fn accept(listener: TcpListener, state: Arc<State>) {
    let mut shutdown = state.shutdown.subscribe();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.changed() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            // Closed at once while the proxy plays a restart's downtime.
            Ok(_) if state.is_down() => {}
            Ok((stream, _)) => {
                tokio::spawn(connection(stream, Arc::clone(&state)));
            }
            Err(error) => tracing::warn!("fault proxy: accepting a connection: {error}"),
        }
    }
}

/// Serves one client connection until it ends, the proxy cuts every connection, or stops.
async fn connection(stream: TcpStream, state: Arc<State>) {
    let mut cut = state.connections_cut.subscribe();
    let mut shutdown = state.shutdown.subscribe();
    let handler = Arc::clone(&state);
    let service = service_fn(move |request| handle(Arc::clone(&handler), request));
    let serving = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        served = serving => if let Err(error) = served {
            tracing::debug!("fault proxy: connection ended: {error}");
        },
        _ = cut.changed() => {}
        _ = shutdown.changed() => {}
    }
}

/// One request's way through the proxy.
async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Closed> {
    let mut uri = request.uri().clone();
    let classified = classify(request.method(), uri.path(), uri.query());
    let is_watch = classified.as_ref().is_some_and(|c| c.verb == "watch");
    if let Some(c) = &classified {
        state.counts.record(c.verb, c.counted_resource());
    }
    if is_watch {
        // A test holding the watches: this one waits until it lets go.
        let mut held = state.watches_held.subscribe();
        let _ = held.wait_for(|holds| *holds == 0).await;
    }
    let effect = classified.as_ref().and_then(|c| {
        state
            .rules
            .lock()
            .take(c.verb, &c.resource, c.namespace.as_deref())
    });
    let shape = match effect {
        Some(Effect::Status {
            code,
            retry_after_seconds,
            in_band,
        }) => {
            let error = answers::injected(code, retry_after_seconds);
            return Ok(answers::error(&error, in_band && is_watch));
        }
        Some(Effect::CloseConnection) => return Err(Closed),
        Some(Effect::CutStream {
            after_events,
            mid_event,
        }) => Shape::Cut {
            after_events,
            mid_event,
        },
        Some(Effect::Stall(d)) => Shape::Stall(d),
        Some(Effect::Truncate { keep_bytes }) => Shape::Truncate { keep_bytes },
        Some(Effect::Delay(_)) | None => Shape::Pass,
    };
    if is_watch {
        let mode = *state.watch_list.lock();
        match watch_list::treat(mode, uri.query()) {
            Treatment::Forward => {}
            Treatment::Refused(error) => return Ok(answers::error(&error, false)),
            Treatment::Rewritten(query) => uri = with_query(&uri, &query)?,
        }
    }
    if let (Some(c), Some(compacted)) = (&classified, state.compacted())
        && let Some((error, in_band)) = compaction::expired(compacted, c, uri.query())
    {
        return Ok(answers::error(&error, in_band));
    }
    let bookmarks = match is_watch && flag(uri.query(), "allowWatchBookmarks") {
        true => {
            let accept = request
                .headers()
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok());
            let watched = state
                .kinds
                .watched_type(&state.upstream, uri.path(), accept)
                .await;
            watched.map(|watched| Bookmarks {
                now: state.bookmark_now.subscribe(),
                watched,
            })
        }
        false => None,
    };
    let (mut parts, body) = request.into_parts();
    parts.uri = uri.clone();
    let body: Bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            tracing::debug!("fault proxy: reading a request body: {error}");
            return Err(Closed);
        }
    };
    let response = match state.upstream.send(parts, body).await {
        Ok(response) => response,
        Err(error) => {
            // The client sees what it would see of a server it cannot reach.
            tracing::warn!("fault proxy: {uri}: the server did not answer: {error}");
            return Err(Closed);
        }
    };
    if let Some(Effect::Delay(d)) = effect {
        tokio::time::sleep(d).await;
    }
    let (mut parts, body) = response.into_parts();
    if shape != Shape::Pass {
        parts.headers.remove(header::CONTENT_LENGTH);
    }
    let watch = (is_watch && parts.status.is_success()).then(|| {
        let framing = Framing::of(
            parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        );
        WatchBody {
            framing,
            dropped: state.watches_dropped.subscribe(),
            // Bookmarks are JSON lines: a protobuf watch gets none.
            bookmarks: bookmarks.filter(|_| framing == Framing::Lines),
            _open: OpenWatch::new(Arc::clone(&state.counts)),
        }
    });
    Ok(Response::from_parts(parts, shaped(body, shape, watch)))
}

/// `uri` with its query replaced by `query` (none if empty).
fn with_query(uri: &http::Uri, query: &str) -> Result<http::Uri, Closed> {
    let path_and_query = match query.is_empty() {
        true => uri.path().to_owned(),
        false => format!("{}?{query}", uri.path()),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().map_err(|_| Closed)?);
    http::Uri::from_parts(parts).map_err(|_| Closed)
}
