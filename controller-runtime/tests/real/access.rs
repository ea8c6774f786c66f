//! The member processes' identity on a real server: a ServiceAccount of the run's namespace,
//! bound to two Roles there (the workload's ConfigMaps, Secrets and Events; and Leases), and a
//! kubeconfig with a token for it from the TokenRequest API. The admin of a test kit is in
//! `system:masters`, which RBAC always allows; a ServiceAccount is refused what its bindings do
//! not grant, so withdrawing the Lease binding makes every Lease request of the members a real
//! 403 from the RBAC authorizer, until the binding is created again.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::Kubeconfig;
use tokio::time::Instant;

use super::Cluster;

/// The members' ServiceAccount.
pub const ACCOUNT: &str = "kube-rt-member";
/// The Role and RoleBinding for the workload.
const WORK: &str = "kube-rt-member-work";
/// The Role and RoleBinding for Leases, withdrawn to make Lease writes fail.
const LEASES: &str = "kube-rt-member-leases";
/// How long the members' token lasts.
const TOKEN_SECS: i64 = 4 * 3600;

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    }
}

const ALL: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

impl Cluster {
    /// Creates the ServiceAccount, its Roles and RoleBindings, and writes a kubeconfig for it
    /// to `path` (the admin kubeconfig's server and CA, the ServiceAccount's token).
    pub async fn member_access(&self, path: &Path) -> Result<(), String> {
        let post = PostParams::default();
        let mut account = ServiceAccount::default();
        account.metadata.name = Some(ACCOUNT.to_owned());
        self.api::<ServiceAccount>()
            .create(&post, &account)
            .await
            .map_err(|e| format!("creating ServiceAccount {ACCOUNT}: {e}"))?;
        let roles = [
            (
                WORK,
                vec![
                    rule("", &["configmaps", "secrets"], ALL),
                    // The Secrets' controller reference blocks its owner's deletion, which a
                    // cluster enforcing owner-reference permissions admits only with this.
                    rule("", &["configmaps/finalizers"], &["update"]),
                    rule("", &["events"], &["create", "update", "patch"]),
                    rule("events.k8s.io", &["events"], &["create", "update", "patch"]),
                ],
            ),
            (LEASES, vec![rule("coordination.k8s.io", &["leases"], ALL)]),
        ];
        for (name, rules) in roles {
            let mut role = Role::default();
            role.metadata.name = Some(name.to_owned());
            role.rules = Some(rules);
            self.api::<Role>()
                .create(&post, &role)
                .await
                .map_err(|e| format!("creating Role {name}: {e}"))?;
        }
        self.bind(WORK).await?;
        self.grant_leases().await?;
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(TOKEN_SECS),
                ..TokenRequestSpec::default()
            }),
            ..TokenRequest::default()
        };
        let answer: TokenRequest = self
            .api::<ServiceAccount>()
            .create_subresource("token", ACCOUNT, &post, &request)
            .await
            .map_err(|e| format!("TokenRequest for {ACCOUNT}: {e}"))?;
        let token = answer
            .status
            .and_then(|s| s.token)
            .ok_or("TokenRequest answered without a token")?;
        self.write_kubeconfig(path, &token)
    }

    /// Binds the Role `name` to the members' ServiceAccount.
    async fn bind(&self, name: &str) -> Result<(), String> {
        let mut binding = RoleBinding::default();
        binding.metadata.name = Some(name.to_owned());
        binding.role_ref = RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "Role".to_owned(),
            name: name.to_owned(),
        };
        binding.subjects = Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: ACCOUNT.to_owned(),
            namespace: Some(self.namespace().to_owned()),
            ..Subject::default()
        }]);
        self.api::<RoleBinding>()
            .create(&PostParams::default(), &binding)
            .await
            .map(drop)
            .map_err(|e| format!("creating RoleBinding {name}: {e}"))
    }

    /// Grants the members their Lease rights (again).
    pub async fn grant_leases(&self) -> Result<(), String> {
        self.bind(LEASES).await
    }

    /// Withdraws the members' Lease rights: from now on every Lease request of theirs is
    /// refused with 403.
    pub async fn withdraw_leases(&self) -> Result<(), String> {
        self.api::<RoleBinding>()
            .delete(LEASES, &DeleteParams::default())
            .await
            .map(drop)
            .map_err(|e| format!("deleting RoleBinding {LEASES}: {e}"))
    }

    /// Polls (up to `limit`) until a Lease read with the members' kubeconfig at `members` is
    /// refused with 403: the withdrawal has reached the authorizer. How long that took.
    pub async fn await_forbidden(
        &self,
        members: &Path,
        limit: Duration,
    ) -> Result<Duration, String> {
        let started = Instant::now();
        let members = testenv::cluster::client_from(members)
            .await
            .map_err(|e| e.to_string())?;
        let leases: Api<Lease> = Api::namespaced(members, self.namespace());
        loop {
            match leases.get_opt("any").await {
                Err(kube::Error::Api(e)) if e.code == 403 => return Ok(started.elapsed()),
                answer if started.elapsed() >= limit => {
                    return Err(format!(
                        "a member's Lease read still answered {answer:?} {limit:?} after the \
                         RoleBinding was deleted"
                    ));
                }
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    /// The admin kubeconfig with every user's credentials replaced by `token`.
    fn write_kubeconfig(&self, path: &Path, token: &str) -> Result<(), String> {
        let admin = Kubeconfig::read_from(self.kubeconfig()).map_err(|e| e.to_string())?;
        let mut value = serde_yaml::to_value(&admin).map_err(|e| e.to_string())?;
        let users = value
            .get_mut("users")
            .and_then(serde_yaml::Value::as_sequence_mut)
            .ok_or("the admin kubeconfig has no users")?;
        for user in users {
            let mut credentials = serde_yaml::Mapping::new();
            credentials.insert("token".into(), token.into());
            if let Some(map) = user.as_mapping_mut() {
                map.insert("user".into(), credentials.into());
            }
        }
        let text = serde_yaml::to_string(&value).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    }
}
