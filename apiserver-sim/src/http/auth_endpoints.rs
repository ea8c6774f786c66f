//! The endpoints of the auth module that are not stored resources: TokenRequest
//! (`serviceaccounts/<name>/token`), SelfSubjectAccessReview, SelfSubjectRulesReview and
//! SelfSubjectReview.

use http::{HeaderMap, Method, Response};
use serde_json::Value;

use super::decode::json_body;
use super::respond::{self, Body};
use crate::api::route::Route;
use crate::auth::identity::Identity;
use crate::auth::{review, rules_review, self_review, token_request};
use crate::machinery::status::{ApiError, ApiResult};
use crate::shared::Shared;

/// An endpoint's answer to a JSON request body.
type Answer<'a> = Box<dyn FnOnce(&[u8]) -> ApiResult<Value> + 'a>;

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
    let (auth, state) = (&shared.auth, &shared.state);
    let (group, plural, name) = (rp.group.as_str(), rp.plural.as_str(), rp.name.as_deref());
    let answer: Answer<'_> =
        if token_request::is_token_request(group, plural, rp.subresource.as_deref()) {
            let (Some(ns), Some(name)) = (rp.namespace.as_deref(), name) else {
                return Some(respond::error(&ApiError::unknown_path()));
            };
            Box::new(move |json: &[u8]| token_request::serve(auth, state, ns, name, json))
        } else if review::is_review(group, plural, name) {
            Box::new(|json: &[u8]| review::serve(auth, state, who, json))
        } else if rules_review::is_rules_review(group, plural, name) {
            Box::new(|json: &[u8]| rules_review::serve(auth, state, who, json))
        } else if self_review::is_self_review(group, plural, name) {
            Box::new(|json: &[u8]| self_review::serve(who, json))
        } else {
            return None;
        };
    if method != Method::POST {
        return Some(respond::error(&ApiError::method_not_allowed()));
    }
    // kubectl's typed clients send these bodies in protobuf.
    Some(
        match json_body(headers, body).and_then(|json| answer(&json[..])) {
            Ok(doc) => respond::json(201, &doc),
            Err(e) => respond::error(&e),
        },
    )
}
