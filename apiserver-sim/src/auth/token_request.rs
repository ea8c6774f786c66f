//! The TokenRequest API: `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (what
//! `kubectl create token` calls) answers a `TokenRequest` whose `status.token` authenticates
//! as that ServiceAccount until `status.expirationTimestamp`.

use jiff::{SignedDuration, Timestamp};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::service_account_uid;
use super::state::Auth;
use super::tokens::{DEFAULT_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS};
use crate::machinery::status::{ApiError, ApiResult, Cause};
use crate::store::State;

/// The audience of tokens requested without one: the API server's default issuer.
const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// Whether a resource request is a TokenRequest: `serviceaccounts/<name>/token` in core v1.
pub(crate) fn is_token_request(group: &str, plural: &str, subresource: Option<&str>) -> bool {
    group.is_empty() && plural == "serviceaccounts" && subresource == Some("token")
}

/// A token for the ServiceAccount `namespace/name`, valid for `seconds`: the token and when it
/// expires. 404 if the ServiceAccount does not exist.
pub(crate) fn issue(
    auth: &Auth,
    state: &Mutex<State>,
    namespace: &str,
    name: &str,
    seconds: i64,
) -> ApiResult<(String, Timestamp)> {
    let st = state.lock();
    let Some(uid) = service_account_uid(&st, namespace, name) else {
        let info = st
            .lookup("", "v1", "serviceaccounts")
            .ok_or_else(ApiError::unknown_path)?;
        return Err(ApiError::not_found(&info, name));
    };
    drop(st);
    let expires = Timestamp::now()
        .checked_add(SignedDuration::from_secs(seconds))
        .map_err(|e| ApiError::bad_request(format!("expirationSeconds: {e}")))?;
    Ok((auth.tokens.issue(namespace, name, &uid, expires), expires))
}

/// Serves a TokenRequest `body` for `namespace/name`: the TokenRequest to answer with 201.
pub(crate) fn serve(
    auth: &Auth,
    state: &Mutex<State>,
    namespace: &str,
    name: &str,
    body: &[u8],
) -> ApiResult<Value> {
    let request: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("decoding TokenRequest: {e}")))?
    };
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    let seconds = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION_SECONDS,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    if seconds < MIN_EXPIRATION_SECONDS {
        let message =
            format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes");
        let cause = Cause::typed("spec.expirationSeconds", &message);
        let group = "authentication.k8s.io";
        return Err(ApiError::invalid_kind(
            group,
            "TokenRequest",
            name,
            vec![cause],
        ));
    }
    let (token, expires) = issue(auth, state, namespace, name, seconds)?;
    let now = Timestamp::now().to_string();
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": now},
        "spec": {
            // No audiences asked for: the API server's own, as upstream fills them in.
            "audiences": spec
                .get("audiences")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .map_or_else(|| json!([API_AUDIENCE]), |a| json!(a)),
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef").cloned().unwrap_or(Value::Null),
        },
        "status": {
            "token": token,
            "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        },
    }))
}
