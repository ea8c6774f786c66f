//! The HTTP/1.1 front end: accept loop, per-request logging, body limit, content
//! negotiation and routing.

mod admission_flow;
mod admitted;
mod admitted_apply;
mod admitted_delete;
mod auth_endpoints;
mod converted;
mod decode;
mod discovery;
mod not_found;
mod openapi_meta;
mod openapi_schemas;
mod openapi_v2;
mod pod_actions;
mod pod_log;
mod reads;
mod render;
mod request;
mod respond;
mod scale;
mod sim;
mod trickle;
mod verbs;
mod wire;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{Method, Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::api::route::{self, Route};
pub use respond::Body;

use crate::auth::identity::Identity;
use crate::machinery::query::Query;
use crate::machinery::status::ApiError;
use crate::shared::Shared;

/// Accepts connections until shutdown.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        let (stream, peer) = tokio::select! {
            () = crate::shared::shutting_down(&mut shutdown) => return,
            res = listener.accept() => match res {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        if refusing(&shared) {
            // A restart's downtime: the peer sees its connection closed at once.
            if let Some(c) = &shared.chaos {
                c.record(crate::faults::chaos::stats::FaultKind::RefusedConnection);
            }
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut shutdown = shared.shutdown.subscribe();
            let mut restart = shared.cut_connections.subscribe();
            restart.borrow_and_update();
            let svc_shared = shared.clone();
            let svc = service_fn(move |req| {
                let shared = svc_shared.clone();
                async move { Ok::<_, Infallible>(handle(shared, req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                res = conn.as_mut() => {
                    if let Err(e) = res {
                        tracing::debug!(%peer, error = %e, "connection ended with error");
                    }
                }
                () = crate::shared::shutting_down(&mut shutdown) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
                // A restart: drop the connection mid-flight, no final chunk, no goodbye.
                _ = restart.changed() => {}
            }
        });
    }
}

/// Whether new connections are being closed (a restart's downtime).
fn refusing(shared: &Shared) -> bool {
    let mut down = shared.down_until.lock();
    match *down {
        Some(until) if tokio::time::Instant::now() < until => true,
        Some(_) => {
            *down = None;
            false
        }
        None => false,
    }
}

/// Handles a resource request under chaos mode's per-request faults (if any).
async fn resource_with_chaos(
    shared: &Arc<Shared>,
    method: &Method,
    rp: &route::ResourcePath,
    query: &Query,
    headers: &http::HeaderMap,
    who: &Identity,
    body: Bytes,
) -> Response<Body> {
    let Some(chaos) = &shared.chaos else {
        return verbs::handle(shared, method, rp, query, headers, who, body).await;
    };
    let faults = chaos.on_request();
    if let Some(d) = faults.delay {
        tokio::time::sleep(d).await;
    }
    let resp = match &faults.fail {
        Some(e) => respond::error(e),
        None => verbs::handle(shared, method, rp, query, headers, who, body).await,
    };
    match faults.tiny_writes {
        Some(seed) => resp.map(|b| trickle::trickle(b, seed)),
        None => resp,
    }
}

/// Handles one request and logs it.
async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let resp = handle_inner(&shared, req).await;
    let status = resp.status().as_u16();
    tracing::info!(
        method = %method,
        path = %path,
        status,
        duration_us = start.elapsed().as_micros() as u64,
        "request"
    );
    resp
}

fn req_path_is_readyz(uri: &http::Uri) -> bool {
    uri.path().trim_end_matches('/').starts_with("/readyz")
}

/// Whether the `Accept` header allows a JSON (or, for resources, protobuf) answer.
fn accepts_json(req: &Request<Incoming>) -> bool {
    let Some(accept) = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
    else {
        return true;
    };
    accept.trim().is_empty()
        || accept.split(',').any(|part| {
            let base = part.split(';').next().unwrap_or("").trim();
            base == "*/*"
                || base == "application/*"
                || base.contains("json")
                || base == crate::api::format::PROTOBUF
        })
}

/// How many times the body limit an over-limit body may reach and still be read to its end
/// (and discarded) before the 413 goes out. Closing a connection with unread request bytes
/// makes the kernel send a reset that can swallow the answer (kube-apiserver's Go server
/// drains and lingers for the same reason); larger bodies are answered at once.
const DRAIN_FACTOR: usize = 4;

/// Reads the whole request body, or 413 once it exceeds the limit.
async fn read_body(shared: &Shared, mut body: Incoming) -> Result<Bytes, ApiError> {
    let limit = shared.config.body_limit;
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| ApiError::bad_request(format!("failed to read request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if buf.len() + data.len() > limit {
            drain(body, limit.saturating_mul(DRAIN_FACTOR)).await;
            return Err(ApiError::too_large(limit));
        }
        buf.extend_from_slice(&data);
    }
    Ok(buf.freeze())
}

/// Reads and discards the rest of a body, up to `cap` bytes.
async fn drain(mut body: Incoming, cap: usize) {
    let mut read = 0usize;
    while read <= cap {
        match body.frame().await {
            Some(Ok(frame)) => read = read.saturating_add(frame.data_ref().map_or(0, Bytes::len)),
            Some(Err(_)) | None => return,
        }
    }
}

async fn handle_inner(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let route = route::parse(req.uri().path());
    // A log is plain text, whatever JSON or protobuf the client also takes.
    if !accepts_json(&req) && !pod_log::is_log(&route) {
        return respond::error(&ApiError::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json",
        ));
    }
    if let Some(len) = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        && len > shared.config.body_limit.saturating_mul(DRAIN_FACTOR)
    {
        return respond::error(&ApiError::too_large(shared.config.body_limit));
    }
    let aggregated = discovery::wants_aggregated(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    let aggregated_doc = |core: bool| {
        let doc = discovery::aggregated(&shared.state.lock(), core);
        let mut r = respond::json(200, &doc);
        if let Ok(ct) = http::HeaderValue::from_str(discovery::AGGREGATED_CT) {
            r.headers_mut().insert(header::CONTENT_TYPE, ct);
        }
        r
    };
    let query = Query::parse(req.uri().query());
    let method = req.method().clone();
    let (parts, body) = req.into_parts();
    let body = match read_body(shared, body).await {
        Ok(b) => b,
        Err(e) => return respond::error(&e),
    };
    let get_only = |f: &dyn Fn() -> Response<Body>| {
        if method == Method::GET || method == Method::HEAD {
            f()
        } else {
            respond::error(&ApiError::method_not_allowed())
        }
    };
    if let Route::Resource(rp) = &route {
        request::count(shared, &method, rp, &query);
    }
    let identity = match crate::auth::gate(
        &shared.auth,
        &shared.state,
        &method,
        parts.uri.path(),
        &route,
        &query,
        &parts.headers,
    ) {
        Ok(identity) => identity,
        Err(e) => return respond::error(&e),
    };
    if let Some(resp) =
        auth_endpoints::serve(shared, &identity, &method, &route, &parts.headers, &body)
    {
        return resp;
    }
    if let Some(resp) = pod_log::serve(shared, &method, &route, &query) {
        return resp;
    }
    if let Some(resp) = pod_actions::serve(shared, &method, &route, &query, &parts.headers, &body) {
        return resp;
    }
    let ready = shared.ready.load(std::sync::atomic::Ordering::SeqCst);
    match route {
        Route::Resource(_)
        | Route::CoreVersions
        | Route::Groups
        | Route::Group(_)
        | Route::GroupVersion(..)
            if !ready =>
        {
            let mut e = ApiError::new(429, "TooManyRequests", "storage is (re)initializing");
            e.details.retry_after = Some(1);
            respond::error(&e)
        }
        Route::Health if !ready && req_path_is_readyz(&parts.uri) => {
            respond::text(500, "[-]storage not ready\nreadyz check failed")
        }
        Route::Resource(rp) => {
            let unserved = not_found::resource(&shared.state.lock(), &rp);
            match unserved {
                Some(resp) => resp,
                None => {
                    resource_with_chaos(
                        shared,
                        &method,
                        &rp,
                        &query,
                        &parts.headers,
                        &identity,
                        body,
                    )
                    .await
                }
            }
        }
        Route::Sim(segs) => sim::handle(shared, &method, &segs, &body),
        Route::Health => get_only(&|| respond::text(200, "ok")),
        Route::Version => get_only(&|| respond::json(200, &discovery::version())),
        Route::CoreVersions if aggregated => get_only(&|| aggregated_doc(true)),
        Route::Groups if aggregated => get_only(&|| aggregated_doc(false)),
        Route::CoreVersions => get_only(&|| {
            let addr = shared.addr.get().map(|a| a.to_string()).unwrap_or_default();
            respond::json(200, &discovery::core_versions(&addr))
        }),
        Route::Groups => {
            get_only(&|| respond::json(200, &discovery::group_list(&shared.state.lock())))
        }
        Route::Group(g) => get_only(&|| match discovery::group(&shared.state.lock(), &g) {
            Some(doc) => respond::json(200, &doc),
            None => not_found::page_not_found(),
        }),
        Route::GroupVersion(g, v) => get_only(&|| {
            let st = shared.state.lock();
            match discovery::resource_list(&st, &g, &v) {
                Some(doc) => respond::json(200, &doc),
                None => not_found::group_version(&st, &g),
            }
        }),
        Route::OpenApiV2 => get_only(&|| {
            if !openapi_v2::accepts_json(&parts.headers) {
                return respond::text(406, "");
            }
            let docs = openapi_v2::store_documents(&shared.state.lock());
            respond::json(200, &openapi_v2::document(docs))
        }),
        Route::OpenApiIndex => {
            get_only(&|| respond::json(200, &discovery::openapi_index(&shared.state.lock())))
        }
        Route::OpenApiDoc(g, v) => get_only(&|| {
            let doc = discovery::openapi_doc(&shared.state.lock(), &g, &v);
            match doc {
                Some(doc) => respond::json(200, &discovery::with_builtin_schemas(doc, &g, &v)),
                None => not_found::openapi_not_found(),
            }
        }),
        Route::Unknown => not_found::unrouted(&shared.state.lock(), parts.uri.path()),
    }
}
