//! Authentication and authorization, off unless [`crate::ApiServerBuilder::rbac`] (binary:
//! `--rbac`) turns them on.
//!
//! With RBAC on, every request but the simulator's own `/__sim` controls must carry a bearer
//! token the server issued (401 `Unauthorized` otherwise, as with `--anonymous-auth=false`):
//! the admin token of [`crate::ApiServer::client`] and the written kubeconfig (user
//! `system:admin` in `system:masters`, which passes every check), or a ServiceAccount token
//! from the TokenRequest API (`serviceaccounts/<name>/token`) or
//! [`crate::ApiServer::service_account_token`] (user `system:serviceaccount:NS:NAME`, groups
//! `system:serviceaccounts`, `system:serviceaccounts:NS`, `system:authenticated`). The RBAC
//! authorizer then decides from the stored Roles, ClusterRoles (aggregation included),
//! RoleBindings and ClusterRoleBindings; a refusal is upstream's 403 `Forbidden` `Status`,
//! recorded for tests ([`Denial`]). At start the server stores the bootstrap roles every
//! cluster has: `cluster-admin`, `system:discovery`, `system:basic-user` and
//! `system:public-info-viewer`, bound as upstream.
//!
//! - `state`: what the server keeps (on or off, tokens, denials), held by `shared.rs`;
//! - `identity`: users and groups; `tokens`: the bearer tokens the server accepts;
//! - `attributes`: a request in RBAC's terms; `rules`: one rule against a request;
//!   `rbac`: bindings, roles, aggregation and the decision;
//! - `forbidden`: the 401 and 403 errors; `denials`: the record of refusals;
//! - `bootstrap`: the default roles and bindings; `token_request`: the TokenRequest
//!   subresource; `review`: SelfSubjectAccessReview (`kubectl auth can-i`);
//!   `rules_review`: SelfSubjectRulesReview (`kubectl auth can-i --list`); `self_review`:
//!   SelfSubjectReview (`kubectl auth whoami`).

pub(crate) mod attributes;
pub(crate) mod bootstrap;
pub(crate) mod denials;
pub(crate) mod forbidden;
pub(crate) mod identity;
pub(crate) mod rbac;
pub(crate) mod review;
pub(crate) mod rules;
pub(crate) mod rules_review;
pub(crate) mod self_review;
pub(crate) mod state;
pub(crate) mod token_request;
pub(crate) mod tokens;

use http::{HeaderMap, Method};
use parking_lot::Mutex;

use crate::api::route::Route;
use crate::machinery::query::Query;
use crate::machinery::resource_info::GroupResourceRef;
use crate::machinery::status::ApiError;
use crate::store::State;
use attributes::of_request;
use identity::Identity;
use state::Auth;
use tokens::bearer;

/// The uid of the ServiceAccount `namespace/name`, if it exists.
pub(crate) fn service_account_uid(st: &State, namespace: &str, name: &str) -> Option<String> {
    let key = GroupResourceRef::new("", "serviceaccounts");
    let obj = st.get(&key, &(namespace.to_string(), name.to_string()))?;
    Some(crate::machinery::meta::uid(&obj).to_string())
}

/// Authenticates and authorizes one request: who sent it, or the 401 or 403 to answer. With
/// RBAC off every request passes, as the token's user if it names one, else as the admin.
pub(crate) fn gate(
    auth: &Auth,
    state: &Mutex<State>,
    method: &Method,
    path: &str,
    route: &Route,
    query: &Query,
    headers: &HeaderMap,
) -> Result<Identity, ApiError> {
    let token = bearer(headers);
    if matches!(route, Route::Sim(_)) {
        return Ok(Identity::admin());
    }
    let identity = {
        let st = state.lock();
        token.and_then(|t| {
            auth.tokens
                .identify(t, |ns, name| service_account_uid(&st, ns, name))
        })
    };
    if !auth.enabled {
        return Ok(identity.unwrap_or_else(Identity::admin));
    }
    let Some(identity) = identity else {
        return Err(forbidden::unauthorized());
    };
    let attrs = of_request(method, path, route, query);
    let decision = rbac::authorize(&state.lock(), &identity, &attrs);
    if decision.allowed {
        return Ok(identity);
    }
    let err = forbidden::forbidden(&identity.user, &attrs, &decision.reason);
    tracing::info!(user = %identity.user, message = %err.message, "forbidden");
    auth.denials.record(&identity.user, &attrs, &err.message);
    Err(err)
}
