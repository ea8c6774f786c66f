//! Reads of a custom resource in a version other than the stored one, when its CRD converts
//! through a webhook: get, list (one `ConversionReview` for the page) and watch (one per
//! batch of events), as a real server converts on every read.

use std::sync::Arc;

use http::Response;

use super::reads::{fetch, list_page, watch_stream};
use super::render::{list_response, object_response};
use super::request::Req;
use super::respond::{self, Body};
use crate::admission::conversion::Converter;
use crate::admission::review::Failure;
use crate::admission::watch_conversion::convert_stream;
use crate::shared::Shared;
use crate::store::Stored;

/// GET, the object converted.
pub(super) async fn get(
    shared: &Shared,
    req: &Req<'_>,
    conv: &Converter,
) -> Result<Response<Body>, Failure> {
    let obj = fetch(shared, req)?;
    let out = conv.convert((*obj).clone(), req.version).await?;
    Ok(object_response(200, req, &out)?)
}

/// LIST, the page's objects converted together.
pub(super) async fn list(
    shared: &Shared,
    req: &Req<'_>,
    conv: &Converter,
) -> Result<Response<Body>, Failure> {
    let (items, md) = list_page(shared, req)?;
    let objs = items.iter().map(|s| (*s.obj).clone()).collect();
    let converted: Vec<Stored> = conv
        .convert_all(objs, req.version)
        .await?
        .into_iter()
        .map(|o| Stored::new(Arc::new(o)))
        .collect();
    Ok(list_response(req, &converted, md)?)
}

/// WATCH, read in the stored version and converted batch by batch.
pub(super) fn watch(
    shared: &Arc<Shared>,
    req: &Req<'_>,
    conv: Converter,
) -> Result<Response<Body>, Failure> {
    let storage = req.info.storage_version().to_string();
    let inner = watch_stream(shared, req, &storage)?;
    Ok(respond::stream(convert_stream(
        inner,
        conv,
        req.version.to_string(),
        req.info.api_version(req.version),
    )))
}
