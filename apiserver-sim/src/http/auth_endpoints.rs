//! The endpoints of the auth module that are not stored resources: TokenRequest
//! (`serviceaccounts/<name>/token`), SelfSubjectAccessReview, SelfSubjectRulesReview and
//! SelfSubjectReview.

use http::{HeaderMap, Method, Response};

use super::decode::json_body;

use super::respond::{self, Body};
use crate::api::route::Route;
use crate::auth::identity::Identity;
use crate::auth::{review, rules_review, self_review, token_request};
use crate::machinery::status::ApiError;
use crate::shared::Shared;

/// The response of an auth endpoint, or `None` for any other request.
pub(super) fn serve(
    shared: &Shared,
    who: &Identity,
    method: &Method,
    route: &Route,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response<Body>> {
    let Route::Resource(rp) = route else {
        return None;
    };
    // kubectl's typed clients send these bodies in protobuf.
    let as_json = || json_body(headers, body);
    let answer =
        if token_request::is_token_request(&rp.group, &rp.plural, rp.subresource.as_deref()) {
            let (Some(ns), Some(name)) = (rp.namespace.as_deref(), rp.name.as_deref()) else {
                return Some(respond::error(&ApiError::unknown_path()));
            };
            if method != Method::POST {
                return Some(respond::error(&ApiError::method_not_allowed()));
            }
            as_json()
                .and_then(|json| token_request::serve(&shared.auth, &shared.state, ns, name, &json))
        } else if review::is_review(&rp.group, &rp.plural, rp.name.as_deref()) {
            if method != Method::POST {
                return Some(respond::error(&ApiError::method_not_allowed()));
            }
            as_json().and_then(|json| review::serve(&shared.auth, &shared.state, who, &json))
        } else if rules_review::is_rules_review(&rp.group, &rp.plural, rp.name.as_deref()) {
            if method != Method::POST {
                return Some(respond::error(&ApiError::method_not_allowed()));
            }
            as_json().and_then(|json| rules_review::serve(&shared.auth, &shared.state, who, &json))
        } else if self_review::is_self_review(&rp.group, &rp.plural, rp.name.as_deref()) {
            if method != Method::POST {
                return Some(respond::error(&ApiError::method_not_allowed()));
            }
            as_json().and_then(|json| self_review::serve(who, &json))
        } else {
            return None;
        };
    Some(match answer {
        Ok(doc) => respond::json(201, &doc),
        Err(e) => respond::error(&e),
    })
}
