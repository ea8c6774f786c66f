//! The least-privilege test's server and the controller's identity: the shipped
//! ServiceAccount, ClusterRole, Lease Role and bindings applied in the test's namespace, on the
//! simulator (RBAC on, owner-reference permissions enforced as hardened clusters do) or on an
//! existing cluster (its own authorizer and admission plugins).

use controller_runtime::manager::{self, Manager};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use kube::api::{PostParams, Resource};
use kube::core::ApiResource;
use kube::{Api, Client};
use testenv::TestEnv;
use tokio_util::sync::CancellationToken;

use crate::manifests::rbac_manifest;
use crate::sample_controller::controller::register;
use crate::sample_controller::foo::crd;
use crate::sample_controller::operator::{Settings, manager_builder};

/// The name of the shipped ServiceAccount, roles and bindings.
pub const NAME: &str = "sample-controller";

/// The environment, an admin client, and the rules of both roles (the ClusterRole's, then the
/// Lease Role's).
pub struct Setup {
    pub env: TestEnv,
    pub admin: Client,
    pub rules: Vec<PolicyRule>,
}

fn manifest<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/manifests/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Creates `obj`, or replaces what an earlier run left under its name.
async fn put<K>(api: &Api<K>, obj: &K)
where
    K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let name = obj.meta().name.clone().unwrap_or_default();
            let mut obj = obj.clone();
            obj.meta_mut().resource_version = api
                .get(&name)
                .await
                .unwrap()
                .meta()
                .resource_version
                .clone();
            api.replace(&name, &PostParams::default(), &obj)
                .await
                .unwrap();
        }
        Err(error) => panic!("{error}"),
    }
}

/// The server with the CRD and the manifests applied, in the environment's namespace (where
/// the manifests say `default`).
pub async fn setup() -> Setup {
    let builder = TestEnv::builder().crd(crd());
    let builder = if testenv::on_existing_cluster() {
        builder
    } else {
        builder.server(|server| {
            server
                .rbac(true)
                .owner_references_permission_enforcement(true)
        })
    };
    let env = builder.start().await.unwrap();
    let ns = env.namespace().to_owned();
    let admin = env.client();
    let mut account: ServiceAccount = manifest("service-account.yaml");
    account.metadata.namespace = Some(ns.clone());
    put(&Api::namespaced(admin.clone(), &ns), &account).await;
    let (cluster_role, mut lease_role) = rbac_manifest();
    lease_role.metadata.namespace = Some(ns.clone());
    let mut rules = cluster_role.rules.clone().unwrap_or_default();
    rules.extend(lease_role.rules.clone().unwrap_or_default());
    let mut binding: ClusterRoleBinding = manifest("cluster-role-binding.yaml");
    let mut lease_binding: RoleBinding = manifest("role-binding.yaml");
    lease_binding.metadata.namespace = Some(ns.clone());
    for subject in binding
        .subjects
        .iter_mut()
        .chain(lease_binding.subjects.iter_mut())
        .flatten()
    {
        subject.namespace = Some(ns.clone());
    }
    if let Some(cluster) = env.existing_cluster() {
        cluster.delete_at_cleanup(ApiResource::erase::<ClusterRole>(&()), NAME);
        cluster.delete_at_cleanup(ApiResource::erase::<ClusterRoleBinding>(&()), NAME);
    }
    put(&Api::all(admin.clone()), &cluster_role).await;
    put(&Api::<Role>::namespaced(admin.clone(), &ns), &lease_role).await;
    put(&Api::all(admin.clone()), &binding).await;
    put(&Api::namespaced(admin.clone(), &ns), &lease_binding).await;
    Setup { env, admin, rules }
}

/// A client authenticating as the controller's ServiceAccount: the simulator's token for it,
/// or on an existing cluster a token from its TokenRequest API.
pub async fn controller_client(env: &TestEnv) -> Client {
    let ns = env.namespace();
    if let Some(server) = env.simulator() {
        return server.service_account_client(ns, NAME).unwrap();
    }
    let cluster = env.existing_cluster().expect("an existing cluster");
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client(), ns);
    let token = accounts
        .create_token_request(NAME, &PostParams::default(), &TokenRequest::default())
        .await
        .unwrap()
        .status
        .and_then(|status| status.token)
        .expect("a token");
    let mut config = cluster.config().clone();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.into()),
        ..kube::config::AuthInfo::default()
    };
    Client::try_from(config).unwrap()
}

/// A manager running the sample-controller as `client` (its ServiceAccount), as the manifests
/// deploy it (all namespaces, `--leader-elect`; on an existing cluster, shared with other
/// tests, the test's namespace only); stopped with the returned token.
pub fn start_controller(
    env: &TestEnv,
    client: Client,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<Result<(), manager::Error>>,
) {
    let ns = env.namespace();
    let mut settings = Settings::leader_elected(ns);
    if env.existing_cluster().is_some() {
        settings.namespace = Some(ns.to_owned());
    }
    let stop = CancellationToken::new();
    let manager: Manager = manager_builder(client, &settings)
        .handle_signals(false)
        .shutdown_token(stop.clone())
        .build();
    register(&manager).unwrap();
    (stop, tokio::spawn(async move { manager.start().await }))
}
