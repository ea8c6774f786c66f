//! Requests that admission or conversion webhooks take part in, served asynchronously around
//! the same write operations as every other request (apiserver `endpoints/handlers` and the
//! generic registry): the object is decoded and defaulted, mutating webhooks change it, the
//! write runs as a dry run (validation, server fields), validating webhooks judge the final
//! object, and the write is committed; a conflict with a concurrent writer retries the whole
//! sequence when the client made no precondition. Objects of a custom resource whose CRD
//! converts through a webhook are converted to the stored version before the write and back
//! for the answer. Requests without any configured webhook never come here.
//!
//! This file picks the requests and the way each verb goes (`admission_flow` for create,
//! update and patch, `admitted_apply`, `admitted_delete`, `converted` for reads), and adds the
//! webhooks' warnings to the answer.

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Response, header};

use super::admission_flow::Flow;
use super::decode::{json_body, patch_input};
use super::request::{Req, Sub, Verb};
use super::respond::Body;
use crate::admission::conversion::Converter;
use crate::admission::hooks::any_configuration;
use crate::admission::review::{Failure, warning_header};
use crate::api::patch::PatchKind;
use crate::api::repr::Repr;
use crate::shared::Shared;

/// Serves the request here when webhooks take part in it; `None` leaves it to the plain verbs.
pub(super) async fn serve(
    shared: &Arc<Shared>,
    req: &Req<'_>,
    verb: Verb,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response<Body>> {
    let write = matches!(
        verb,
        Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::DeleteCollection
    ) && req.sub != Sub::Scale;
    // Requests on webhook configurations are never sent to webhooks (a real server exempts
    // them so that a broken webhook can always be removed).
    let exempt = req.info.group == crate::kinds::webhook_configuration::GROUP;
    let other_version = !req.info.builtin && req.version != req.info.storage_version();
    let admits = write && !exempt;
    if !admits && !other_version {
        return None;
    }
    let (hooks, conv) = {
        let st = shared.state.lock();
        let hooks = (admits && any_configuration(&st))
            .then(|| shared.admission.current(&st))
            .filter(|h| !h.is_empty());
        let conv = other_version
            .then(|| Converter::new(&st, &req.info, &shared.config.service_endpoints))
            .filter(Converter::uses_webhook);
        (hooks, conv)
    };
    let mut warnings = Vec::new();
    let result = match (verb, hooks, conv) {
        (_, None, None) => return None,
        (Verb::Get | Verb::List | Verb::Watch, _, None) => return None,
        (Verb::Get | Verb::List | Verb::Watch, _, Some(_)) if req.repr != Repr::Full => {
            return None;
        }
        (Verb::Get, _, Some(conv)) if req.sub != Sub::Scale => {
            super::converted::get(shared, req, &conv).await
        }
        (Verb::List, _, Some(conv)) => super::converted::list(shared, req, &conv).await,
        (Verb::Watch, _, Some(conv)) => super::converted::watch(shared, req, conv),
        (Verb::Get, _, Some(_)) => return None,
        (_, hooks, conv) => {
            let conv = conv.unwrap_or_else(|| {
                Converter::new(
                    &shared.state.lock(),
                    &req.info,
                    &shared.config.service_endpoints,
                )
            });
            let flow = Flow {
                shared,
                req,
                hooks: hooks.unwrap_or_default(),
                conv,
            };
            match verb {
                Verb::Create | Verb::Update => flow.write(verb, headers, body, &mut warnings).await,
                Verb::Patch => match patch_input(req, headers, body) {
                    Ok((wo, PatchKind::Apply, config)) => {
                        flow.apply(&wo, &config, &mut warnings).await
                    }
                    Ok((wo, kind, patch)) => flow.patch(wo, kind, &patch, &mut warnings).await,
                    Err(e) => Err(e.into()),
                },
                Verb::Delete => match json_body(headers, body) {
                    Ok(body) => flow.delete(&body, &mut warnings).await,
                    Err(e) => Err(e.into()),
                },
                _ => match json_body(headers, body) {
                    Ok(body) => flow.delete_collection(&body, &mut warnings).await,
                    Err(e) => Err(e.into()),
                },
            }
        }
    };
    Some(finish(req, result, &warnings))
}

/// The response, with one `Warning` header per distinct webhook warning (also on failures,
/// whose `Status` goes out in the request's format; a repeated warning is sent once, as the
/// apiserver's warning recorder does).
fn finish(
    req: &Req,
    result: Result<Response<Body>, Failure>,
    warnings: &[String],
) -> Response<Body> {
    let mut r = match result {
        Ok(r) => r,
        Err(f) => super::wire::value(f.code, req, &f.status),
    };
    add_warnings(&mut r, warnings);
    r
}

/// One `Warning` header per distinct warning, in order.
pub(super) fn add_warnings(r: &mut Response<Body>, warnings: &[String]) {
    for (i, w) in warnings.iter().enumerate() {
        if warnings[..i].contains(w) {
            continue;
        }
        if let Ok(v) = HeaderValue::from_bytes(warning_header(w).as_bytes()) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
}
