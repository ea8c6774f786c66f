//! Answering one HTTP request: find the webhook of the path, check the method, content type and
//! body size, decode the review, run the handler contained (a panic or an overrun becomes an
//! error response), encode the answer — and count it in the metrics.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;

use crate::webhook::admission;
use crate::webhook::admission::AdmissionHook;
use crate::webhook::admission::review::{self as admission_review, DecodedReview};
use crate::webhook::contain::{Failure, contain, contain_blocking};
use crate::webhook::conversion::review as conversion_review;
use crate::webhook::server::shared::{Route, Shared};

/// Answers `request`, counting it under its path when a webhook is registered there.
pub(crate) async fn respond(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let route = shared.routes.read().get(&path).cloned();
    let Some(route) = route else {
        return text(
            StatusCode::NOT_FOUND,
            format!("no webhook is registered on {path}\n"),
        );
    };
    let started = Instant::now();
    let in_flight = shared.metrics.started(&path);
    let response = match route {
        Route::Admission(hook) => admission(&shared, hook, request).await,
        Route::Conversion => conversion(&shared, request).await,
    };
    drop(in_flight);
    shared
        .metrics
        .answered(&path, response.status().as_u16(), started.elapsed());
    response
}

/// Serves an `AdmissionReview`.
async fn admission(
    shared: &Shared,
    hook: Arc<dyn AdmissionHook>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let body = match read_body(shared, request).await {
        Ok(body) => body,
        Err(BodyError::Method(method)) => return method_not_allowed(&method),
        Err(BodyError::Invalid(message)) => {
            return json(StatusCode::BAD_REQUEST, admission_bad_request(message));
        }
    };
    let (status, answer) = answer_admission(shared, hook, &body).await;
    json(status, answer)
}

/// The answer to an admission request whose body could not be read or decoded.
fn admission_bad_request(message: String) -> Vec<u8> {
    let response = admission::errored(400, message);
    admission_review::encode(&admission_review::default_types(), response)
}

/// Answers an `AdmissionReview` body with `hook`: 400 and an error review when it does not
/// decode, otherwise 200 and the handler's response (an error response if it panics or
/// overruns the handler timeout), with the request's uid.
pub(crate) async fn answer_admission(
    shared: &Shared,
    hook: Arc<dyn AdmissionHook>,
    body: &[u8],
) -> (StatusCode, Vec<u8>) {
    let review: DecodedReview = match admission_review::decode(body) {
        Ok(review) => review,
        Err(message) => return (StatusCode::BAD_REQUEST, admission_bad_request(message)),
    };
    let uid = review.request.uid.clone();
    let types = review.types.clone();
    let mut response = match contain(hook.review(review), shared.config.handler_timeout).await {
        Ok(response) => response,
        Err(failure) => {
            if matches!(failure, Failure::Panicked(_)) {
                shared.metrics.panicked();
            }
            tracing::error!(%uid, error = failure.message(), "admission webhook handler failed");
            admission::errored(500, failure.message())
        }
    };
    response.uid = uid;
    (StatusCode::OK, admission_review::encode(&types, response))
}

/// Serves a `ConversionReview`.
async fn conversion(shared: &Shared, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let body = match read_body(shared, request).await {
        Ok(body) => body,
        Err(BodyError::Method(method)) => return method_not_allowed(&method),
        Err(BodyError::Invalid(message)) => {
            return json(
                StatusCode::BAD_REQUEST,
                conversion_review::encode("", Err(message)),
            );
        }
    };
    let (status, answer) = answer_conversion(shared, &body).await;
    json(status, answer)
}

/// Answers a `ConversionReview` body with the registered conversions: 400 and a failed review
/// when it does not decode, otherwise 200 and every object converted, or the review failed
/// with the first object's error (a panicking or overrunning conversion fails it too).
pub(crate) async fn answer_conversion(shared: &Shared, body: &[u8]) -> (StatusCode, Vec<u8>) {
    let request = match conversion_review::decode(body) {
        Ok(request) => request,
        Err(message) => {
            return (
                StatusCode::BAD_REQUEST,
                conversion_review::encode("", Err(message)),
            );
        }
    };
    let registry = shared.conversions.read().clone();
    let uid = request.uid.clone();
    let outcome = contain_blocking(
        move || conversion_review::convert_all(&registry, &request),
        shared.config.handler_timeout,
    )
    .await
    .unwrap_or_else(|failure| {
        if matches!(failure, Failure::Panicked(_)) {
            shared.metrics.conversion_panicked();
        }
        Err(failure.message())
    });
    if let Err(message) = &outcome {
        tracing::warn!(%uid, %message, "conversion failed");
    }
    (StatusCode::OK, conversion_review::encode(&uid, outcome))
}

/// Why a body was not read.
enum BodyError {
    /// Not a POST.
    Method(Method),
    /// Empty, too large, unreadable or not JSON: the message says which.
    Invalid(String),
}

/// The body of a `POST` with content type `application/json`, at most `max_body_bytes` long.
async fn read_body(shared: &Shared, request: Request<Incoming>) -> Result<Bytes, BodyError> {
    if request.method() != Method::POST {
        return Err(BodyError::Method(request.method().clone()));
    }
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .map(HeaderValue::to_str);
    let is_json = matches!(content_type, Some(Ok(value))
        if value.split(';').next().is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json")));
    if !is_json {
        let shown = match content_type {
            Some(Ok(value)) => value.to_owned(),
            Some(Err(_)) => "(not text)".to_owned(),
            None => "(none)".to_owned(),
        };
        return Err(BodyError::Invalid(format!(
            "contentType={shown}, expected application/json"
        )));
    }
    let limit = shared.config.max_body_bytes;
    let too_large = || {
        BodyError::Invalid(format!(
            "request entity is too large; limit is {limit} bytes"
        ))
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let body = match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Err(error) => {
            return Err(BodyError::Invalid(format!(
                "cannot read the request body: {error}"
            )));
        }
    };
    if body.is_empty() {
        return Err(BodyError::Invalid("request body is empty".to_owned()));
    }
    Ok(body)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    respond_with(status, "application/json", Bytes::from(body))
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    respond_with(status, "text/plain; charset=utf-8", Bytes::from(body))
}

fn method_not_allowed(method: &Method) -> Response<Full<Bytes>> {
    text(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("webhooks are called with POST, not {method}\n"),
    )
}

fn respond_with(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header("X-Content-Type-Options", "nosniff")
        .body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
