//! RBAC mode over HTTP with the real `kube::Client`: bearer tokens (admin, ServiceAccount
//! tokens from the builder and from the TokenRequest API), 401 without one, and the RBAC
//! authorizer — Roles and ClusterRoles through RoleBindings and ClusterRoleBindings, groups,
//! subresources, `resourceNames`, aggregation, non-resource URLs — answering upstream's 403.

use std::time::Duration;

use apiserver_sim::{ApiServer, ApiServerBuilder};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::{Client, Error};
use serde_json::json;

const USER: &str = "system:serviceaccount:default:robot";

async fn rbac_server() -> (ApiServer, Client) {
    rbac_server_with(|builder| builder).await
}

/// A server in RBAC mode, configured further by `configure`, with the ServiceAccount
/// `default/robot`; and an admin client.
pub(crate) async fn rbac_server_with(
    configure: impl FnOnce(ApiServerBuilder) -> ApiServerBuilder,
) -> (ApiServer, Client) {
    let server = configure(ApiServer::builder().rbac(true))
        .start()
        .await
        .expect("start");
    let admin = server.client().expect("client");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "robot"}})).unwrap();
    Api::<ServiceAccount>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &sa)
        .await
        .expect("service account");
    (server, admin)
}

pub(crate) fn robot(server: &ApiServer) -> Client {
    server
        .service_account_client("default", "robot")
        .expect("robot client")
}

/// The `Status` of a refused call.
fn refusal<T: std::fmt::Debug>(result: Result<T, Error>) -> (u16, String, String) {
    match result {
        Err(Error::Api(status)) => (status.code, status.reason.clone(), status.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

async fn apply<K>(admin: &Client, ns: Option<&str>, doc: serde_json::Value)
where
    K: kube::Resource<DynamicType = ()>,
{
    let resource = kube::api::ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(admin.clone(), ns, &resource),
        None => Api::all_with(admin.clone(), &resource),
    };
    let mut doc = doc;
    doc["apiVersion"] = json!(resource.api_version);
    doc["kind"] = json!(resource.kind);
    let obj: DynamicObject = serde_json::from_value(doc).expect("object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
}

fn sa_subject() -> serde_json::Value {
    json!([{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}])
}

#[tokio::test]
async fn requests_without_a_valid_token_are_unauthorized() {
    let (server, _admin) = rbac_server().await;
    let anonymous = server.client_with_token("").unwrap();
    let cms: Api<ConfigMap> =
        Api::default_namespaced(server.client_with_token("not-issued").unwrap());
    let (code, reason, message) = refusal(cms.list(&ListParams::default()).await);
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (401, "Unauthorized", "Unauthorized")
    );
    let cms: Api<ConfigMap> = Api::default_namespaced(anonymous);
    assert_eq!(refusal(cms.list(&ListParams::default()).await).0, 401);
    // The admin passes everything; the bootstrap policy is stored like any object.
    let roles: Api<ClusterRole> = Api::all(server.client().unwrap());
    let names: Vec<String> = roles
        .list(&ListParams::default())
        .await
        .unwrap()
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    for name in [
        "cluster-admin",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn rbac_is_off_by_default() {
    let server = ApiServer::start().await.unwrap();
    assert_eq!(server.admin_token(), None);
    let cms: Api<ConfigMap> =
        Api::default_namespaced(server.client_with_token("anything").unwrap());
    assert!(cms.list(&ListParams::default()).await.is_ok());
    server.shutdown().await;
}

#[tokio::test]
async fn an_unbound_service_account_may_discover_but_nothing_else() {
    let (server, _admin) = rbac_server().await;
    let client = robot(&server);
    assert!(
        client.list_api_groups().await.is_ok(),
        "discovery is granted to authenticated users"
    );
    assert!(client.apiserver_version().await.is_ok());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let (code, reason, message) = refusal(cms.list(&ListParams::default()).await);
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        format!(
            r#"configmaps is forbidden: User "{USER}" cannot list resource "configmaps" in API group "" in the namespace "default""#
        )
    );
    let nodes: Api<Node> = Api::all(client.clone());
    let (_, _, message) = refusal(nodes.get("n1").await);
    assert_eq!(
        message,
        format!(
            r#"nodes "n1" is forbidden: User "{USER}" cannot get resource "nodes" in API group "" at the cluster scope"#
        )
    );
    let denials = server.denials();
    assert_eq!(denials.len(), 2, "{denials:?}");
    assert!(denials[0].is("list", "", "configmaps"));
    assert_eq!(denials[1].name.as_deref(), Some("n1"));
    assert_eq!(denials[1].user, USER);
    server.shutdown().await;
}

#[tokio::test]
async fn a_role_binding_grants_its_role_in_its_namespace_only() {
    let (server, admin) = rbac_server().await;
    apply::<Role>(
        &admin,
        Some("default"),
        json!({"metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
    )
    .await;
    apply::<RoleBinding>(
        &admin,
        Some("default"),
        json!({"metadata": {"name": "robot-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": sa_subject()}),
    )
    .await;
    let client = robot(&server);
    let here: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    assert!(here.list(&ListParams::default()).await.is_ok());
    let (_, _, message) = refusal(
        here.create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap(),
        )
        .await,
    );
    assert!(
        message.contains(r#"cannot create resource "configmaps""#),
        "{message}"
    );
    let there: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    assert_eq!(refusal(there.list(&ListParams::default()).await).0, 403);
    let everywhere: Api<ConfigMap> = Api::all(client);
    let (_, _, message) = refusal(everywhere.list(&ListParams::default()).await);
    assert!(message.ends_with("at the cluster scope"), "{message}");
    server.shutdown().await;
}

#[tokio::test]
async fn cluster_roles_bind_to_groups_cluster_wide_or_per_namespace() {
    let (server, admin) = rbac_server().await;
    apply::<ClusterRole>(&admin, None, json!({"metadata": {"name": "lease-rw"},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}]})).await;
    // Through a RoleBinding, a ClusterRole grants in that namespace only.
    apply::<RoleBinding>(&admin, Some("kube-system"), json!({"metadata": {"name": "sa-leases"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "lease-rw"},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:serviceaccounts:default"}]})).await;
    let client = robot(&server);
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "l"}})).unwrap();
    let ks: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    ks.create(&PostParams::default(), &lease)
        .await
        .expect("granted in kube-system");
    let default: Api<Lease> = Api::namespaced(client.clone(), "default");
    assert_eq!(
        refusal(default.create(&PostParams::default(), &lease).await).0,
        403
    );
    // A ClusterRoleBinding to every ServiceAccount grants everywhere.
    apply::<ClusterRoleBinding>(&admin, None, json!({"metadata": {"name": "all-sa-leases"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "lease-rw"},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:serviceaccounts"}]})).await;
    default
        .create(&PostParams::default(), &lease)
        .await
        .expect("granted everywhere");
    assert_eq!(
        Api::<Lease>::all(client)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    server.shutdown().await;
}

#[tokio::test]
async fn subresources_and_resource_names_need_their_own_grants() {
    let (server, admin) = rbac_server().await;
    apply::<Role>(&admin, Some("default"), json!({"metadata": {"name": "narrow"},
        "rules": [
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "create"]},
            {"apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": ["update"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["mine"], "verbs": ["get", "list"]},
        ]})).await;
    apply::<RoleBinding>(
        &admin,
        Some("default"),
        json!({"metadata": {"name": "narrow"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "narrow"},
        "subjects": sa_subject()}),
    )
    .await;
    for name in ["mine", "theirs"] {
        apply::<Lease>(&admin, Some("default"), json!({"metadata": {"name": name}})).await;
    }
    let client = robot(&server);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})).unwrap();
    let d = deployments
        .create(&PostParams::default(), &d)
        .await
        .expect("create granted");
    deployments
        .replace_status("d", &PostParams::default(), &d)
        .await
        .expect("status update granted");
    let (_, _, message) = refusal(deployments.get_scale("d").await);
    assert_eq!(
        message,
        format!(
            r#"deployments.apps "d" is forbidden: User "{USER}" cannot get resource "deployments/scale" in API group "apps" in the namespace "default""#
        )
    );
    let (_, _, message) = refusal(deployments.replace("d", &PostParams::default(), &d).await);
    assert!(
        message.contains(r#"cannot update resource "deployments" in API group "apps""#),
        "{message}"
    );
    let leases: Api<Lease> = Api::namespaced(client, "default");
    assert!(leases.get("mine").await.is_ok());
    assert_eq!(refusal(leases.get("theirs").await).0, 403);
    assert_eq!(refusal(leases.list(&ListParams::default()).await).0, 403);
    let pinned = ListParams::default().fields("metadata.name=mine");
    assert_eq!(
        leases
            .list(&pinned)
            .await
            .expect("a list pinned to the name")
            .items
            .len(),
        1
    );
    server.shutdown().await;
}

#[tokio::test]
async fn aggregated_cluster_roles_grant_what_their_selectors_match() {
    let (server, admin) = rbac_server().await;
    apply::<ClusterRole>(&admin, None, json!({"metadata": {"name": "aggregate"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate-to-aggregate": "true"}}]},
        "rules": []})).await;
    apply::<ClusterRoleBinding>(&admin, None, json!({"metadata": {"name": "robot-aggregate"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "aggregate"},
        "subjects": sa_subject()})).await;
    let nodes: Api<Node> = Api::all(robot(&server));
    assert_eq!(refusal(nodes.list(&ListParams::default()).await).0, 403);
    apply::<ClusterRole>(
        &admin,
        None,
        json!({"metadata": {"name": "node-reader",
            "labels": {"example.com/aggregate-to-aggregate": "true"}},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
    )
    .await;
    assert!(
        nodes.list(&ListParams::default()).await.is_ok(),
        "aggregated rule applies"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_binding_to_a_missing_role_explains_itself() {
    let (server, admin) = rbac_server().await;
    apply::<ClusterRoleBinding>(
        &admin,
        None,
        json!({"metadata": {"name": "dangling"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
        "subjects": sa_subject()}),
    )
    .await;
    let nodes: Api<Node> = Api::all(robot(&server));
    let (_, _, message) = refusal(nodes.list(&ListParams::default()).await);
    assert!(
        message.ends_with(
            r#"at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#
        ),
        "{message}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn token_requests_issue_tokens_bound_to_the_service_account() {
    let (server, admin) = rbac_server().await;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(1200),
            ..Default::default()
        }),
        ..Default::default()
    };
    let issued = accounts
        .create_token_request("robot", &PostParams::default(), &request)
        .await
        .expect("token request");
    let status = issued.status.expect("status");
    let client = server
        .client_with_token(status.token.as_deref().expect("token"))
        .unwrap();
    assert!(client.list_api_groups().await.is_ok());
    let short = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(60),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (code, reason, _) = refusal(
        accounts
            .create_token_request("robot", &PostParams::default(), &short)
            .await,
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert_eq!(
        refusal(
            accounts
                .create_token_request("nobody", &PostParams::default(), &request)
                .await
        )
        .0,
        404
    );
    // A ServiceAccount may not mint tokens without a grant on serviceaccounts/token.
    let own: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let (_, _, message) = refusal(
        own.create_token_request("robot", &PostParams::default(), &request)
            .await,
    );
    assert!(
        message.contains(r#"cannot create resource "serviceaccounts/token""#),
        "{message}"
    );
    // Deleting the ServiceAccount invalidates its tokens.
    accounts
        .delete("robot", &DeleteParams::default())
        .await
        .unwrap();
    testkit::eventually_async("the token stops working", Duration::from_secs(5), || {
        let client = client.clone();
        async move { matches!(client.list_api_groups().await, Err(Error::Api(s)) if s.code == 401) }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn self_subject_access_reviews_answer_for_the_caller() {
    let (server, admin) = rbac_server().await;
    apply::<Role>(
        &admin,
        Some("default"),
        json!({"metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
    )
    .await;
    apply::<RoleBinding>(
        &admin,
        Some("default"),
        json!({"metadata": {"name": "robot-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": sa_subject()}),
    )
    .await;
    let client = robot(&server);
    let review = |verb: &str| {
        let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": "configmaps"}}});
        http::Request::post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).unwrap())
            .unwrap()
    };
    let yes: serde_json::Value = client.request(review("get")).await.expect("review");
    assert_eq!(yes["status"]["allowed"], json!(true));
    let no: serde_json::Value = client.request(review("delete")).await.expect("review");
    assert_eq!(no["status"]["allowed"], json!(false));
    let admin_says: serde_json::Value = admin.request(review("delete")).await.expect("review");
    assert_eq!(admin_says["status"]["allowed"], json!(true));
    server.shutdown().await;
}
