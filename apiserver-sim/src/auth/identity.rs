//! Who a request comes from: the user name and groups RBAC subjects are matched against.

/// The group of every authenticated user.
pub(crate) const AUTHENTICATED: &str = "system:authenticated";
/// The superuser group: its members pass every authorization check, as upstream.
pub(crate) const MASTERS: &str = "system:masters";
/// The user of the admin kubeconfig and of [`crate::ApiServer::client`] with RBAC on.
pub(crate) const ADMIN_USER: &str = "system:admin";
/// The group of every ServiceAccount.
pub(crate) const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// An authenticated user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// The user name (`system:serviceaccount:NS:NAME` for a ServiceAccount).
    pub user: String,
    /// The groups, `system:authenticated` included.
    pub groups: Vec<String>,
}

impl Identity {
    /// The cluster administrator.
    pub fn admin() -> Self {
        Self {
            user: ADMIN_USER.into(),
            groups: vec![MASTERS.into(), AUTHENTICATED.into()],
        }
    }

    /// The ServiceAccount `name` of `namespace`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            user: service_account_user(namespace, name),
            groups: vec![
                SERVICE_ACCOUNTS.into(),
                format!("{SERVICE_ACCOUNTS}:{namespace}"),
                AUTHENTICATED.into(),
            ],
        }
    }

    /// Whether the user is in the superuser group.
    pub fn is_superuser(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }
}

/// `system:serviceaccount:NS:NAME`.
pub(crate) fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}
