//! Identities for tests with [RBAC](crate::ApiServerBuilder::rbac) on: the admin token,
//! ServiceAccount tokens and clients using them, and the refusals the authorizer recorded.

use std::time::Duration;

use crate::auth::denials::Denial;
use crate::auth::tokens::DEFAULT_EXPIRATION_SECONDS;
use crate::error::Result;
use crate::server::handle::ApiServer;

impl ApiServer {
    /// The admin token that [`client`](Self::client) and the kubeconfig send, when RBAC is on
    /// (`None` when off: requests need no credentials then).
    pub fn admin_token(&self) -> Option<&str> {
        self.shared
            .auth
            .enabled
            .then(|| self.shared.auth.tokens.admin())
    }

    /// Issues a token for the ServiceAccount `namespace/name`, valid for an hour, as the
    /// TokenRequest API (`kubectl create token`) does; it authenticates as
    /// `system:serviceaccount:<namespace>:<name>` until the ServiceAccount is deleted. Fails
    /// with [`Error::Api`](crate::Error::Api) (404) when the ServiceAccount does not exist.
    pub fn service_account_token(&self, namespace: &str, name: &str) -> Result<String> {
        self.service_account_token_for(
            namespace,
            name,
            Duration::from_secs(DEFAULT_EXPIRATION_SECONDS.unsigned_abs()),
        )
    }

    /// [`service_account_token`](Self::service_account_token) valid for `lifetime`.
    pub fn service_account_token_for(
        &self,
        namespace: &str,
        name: &str,
        lifetime: Duration,
    ) -> Result<String> {
        let seconds = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
        let (token, _) = crate::auth::token_request::issue(
            &self.shared.auth,
            &self.shared.state,
            namespace,
            name,
            seconds,
        )?;
        Ok(token)
    }

    /// A `kube::Client` for this server authenticating with `token` (default namespace
    /// `default`).
    pub fn client_with_token(&self, token: &str) -> Result<kube::Client> {
        self.client_with(Some(token))
    }

    /// A `kube::Client` acting as the ServiceAccount `namespace/name` (a fresh
    /// [`service_account_token`](Self::service_account_token)).
    pub fn service_account_client(&self, namespace: &str, name: &str) -> Result<kube::Client> {
        let token = self.service_account_token(namespace, name)?;
        self.client_with(Some(&token))
    }

    /// The requests refused with 403 since the start or the last
    /// [`clear_denials`](Self::clear_denials), oldest first (the last 10 000).
    pub fn denials(&self) -> Vec<Denial> {
        self.shared.auth.denials.snapshot()
    }

    /// Forgets the recorded denials.
    pub fn clear_denials(&self) {
        self.shared.auth.denials.clear();
    }
}
