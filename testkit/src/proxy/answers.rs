//! The proxy's own answers: a `Status` error as a real server sends it, over HTTP (with
//! `Retry-After` when it carries one) or in band as a watch's one `ERROR` event. The documents
//! are the simulator's (`apiserver_sim::ApiError`), so both servers' faults read the same.

use apiserver_sim::ApiError;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};

use super::body::{ProxyBody, full};

/// `error` as the answer to a request: an HTTP error, or for a watch with `in_band` HTTP 200
/// and one `ERROR` event, after which the stream ends.
pub(crate) fn error(e: &ApiError, in_band_watch: bool) -> Response<ProxyBody> {
    let status = e.to_status();
    let (code, body) = if in_band_watch {
        let event = serde_json::json!({"type": "ERROR", "object": status});
        (StatusCode::OK, format!("{event}\n"))
    } else {
        let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, status.to_string())
    };
    let mut response = Response::new(full(Bytes::from(body)));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if !in_band_watch && let Some(seconds) = e.details.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// The error of a status fault: the simulator's injected `Status` for `code`, with
/// `Retry-After` seconds (1 for a 429 without any, as the simulator gives it).
pub(crate) fn injected(code: u16, retry_after_seconds: Option<u64>) -> ApiError {
    ApiError::injected(code, retry_after_seconds.or((code == 429).then_some(1)))
}
