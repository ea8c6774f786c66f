//! Bearer tokens: the admin token of the simulator's own kubeconfig and client, and the
//! ServiceAccount tokens issued through the TokenRequest API (`serviceaccounts/token`) or
//! [`crate::ApiServer::service_account_token`]. A ServiceAccount token is bound to the
//! account's uid: it stops working once that ServiceAccount is deleted (or recreated), or
//! when it expires.

use std::collections::HashMap;

use jiff::Timestamp;
use parking_lot::Mutex;

use super::identity::Identity;

/// Lifetime of a token when the request asks for none (upstream's default: one hour).
pub(crate) const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a TokenRequest may ask for (upstream: 10 minutes).
pub(crate) const MIN_EXPIRATION_SECONDS: i64 = 600;

/// The ServiceAccount a token was issued for.
#[derive(Debug, Clone)]
struct Issued {
    namespace: String,
    name: String,
    uid: String,
    expires: Timestamp,
}

/// The tokens the server accepts.
#[derive(Debug)]
pub(crate) struct Tokens {
    admin: String,
    issued: Mutex<HashMap<String, Issued>>,
}

impl Default for Tokens {
    fn default() -> Self {
        Self {
            admin: format!("sim-admin.{}", uuid::Uuid::new_v4().simple()),
            issued: Mutex::new(HashMap::new()),
        }
    }
}

impl Tokens {
    /// The admin token.
    pub fn admin(&self) -> &str {
        &self.admin
    }

    /// Issues a token for the ServiceAccount `namespace/name` whose uid is `uid`.
    pub fn issue(&self, namespace: &str, name: &str, uid: &str, expires: Timestamp) -> String {
        let token = format!("sim-sa.{}", uuid::Uuid::new_v4().simple());
        self.issued.lock().insert(
            token.clone(),
            Issued {
                namespace: namespace.to_string(),
                name: name.to_string(),
                uid: uid.to_string(),
                expires,
            },
        );
        token
    }

    /// Who `token` authenticates, given the uid each ServiceAccount has now (`current_uid`);
    /// `None` for an unknown, expired or orphaned token.
    pub fn identify(
        &self,
        token: &str,
        current_uid: impl FnOnce(&str, &str) -> Option<String>,
    ) -> Option<Identity> {
        if token == self.admin {
            return Some(Identity::admin());
        }
        let issued = self.issued.lock().get(token).cloned()?;
        if Timestamp::now() >= issued.expires {
            self.issued.lock().remove(token);
            return None;
        }
        if current_uid(&issued.namespace, &issued.name).as_deref() != Some(issued.uid.as_str()) {
            return None;
        }
        Some(Identity::service_account(&issued.namespace, &issued.name))
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub(crate) fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
