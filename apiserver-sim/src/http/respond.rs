//! Response builders: JSON documents, Status errors, text and watch streams.

use std::convert::Infallible;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::Frame;
use serde_json::Value;

use crate::machinery::status::ApiError;

/// The body type of every response.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A response with a fixed body.
pub fn bytes(code: u16, content_type: &str, body: Bytes) -> Response<Body> {
    let mut r = Response::new(Full::new(body).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    r
}

/// One compact JSON document ending in a newline.
pub fn json(code: u16, v: &Value) -> Response<Body> {
    let mut buf = serde_json::to_vec(v).unwrap_or_default();
    buf.push(b'\n');
    bytes(code, "application/json", Bytes::from(buf))
}

/// Pre-serialized JSON (no trailing newline yet).
pub fn raw_json(code: u16, body: &[u8]) -> Response<Body> {
    let mut buf = BytesMut::with_capacity(body.len() + 1);
    buf.extend_from_slice(body);
    buf.extend_from_slice(b"\n");
    bytes(code, "application/json", buf.freeze())
}

/// A `Status` error, with `Retry-After` when the error carries one.
pub fn error(e: &ApiError) -> Response<Body> {
    let mut r = json(e.code, &e.to_status());
    if let Some(s) = e.details.retry_after
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// `text/plain` body.
pub fn text(code: u16, s: &str) -> Response<Body> {
    bytes(
        code,
        "text/plain; charset=utf-8",
        Bytes::from(s.to_string()),
    )
}

/// A streaming watch response (HTTP 200, chunked, one JSON event per line).
pub fn stream(s: impl Stream<Item = Bytes> + Send + 'static) -> Response<Body> {
    stream_as("application/json", s)
}

/// A `Status` error as a protobuf document, with `Retry-After` when the error carries one.
pub fn protobuf_error(e: &ApiError) -> Response<Body> {
    let body = crate::api::protobuf::encode_status(&e.to_status());
    let mut r = bytes(e.code, crate::api::format::PROTOBUF, body);
    if let Some(s) = e.details.retry_after
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// A streaming watch response of the given content type (HTTP 200, chunked).
pub fn stream_as(
    content_type: &'static str,
    s: impl Stream<Item = Bytes> + Send + 'static,
) -> Response<Body> {
    let body = StreamBody::new(s.map(|b| Ok::<_, Infallible>(Frame::data(b))));
    let mut r = Response::new(BodyExt::boxed_unsync(body));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    r
}
