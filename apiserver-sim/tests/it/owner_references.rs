//! `OwnerReferencesPermissionEnforcement` (`ApiServerBuilder::owner_references_permission_enforcement`)
//! with RBAC on, through the real `kube::Client`: a ServiceAccount that may write ConfigMaps
//! but not its owner's finalizers cannot set `blockOwnerDeletion`; without `delete` it cannot
//! change owner references on update; the plugin is off unless asked for.

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::Error;
use kube::api::{Api, ObjectMeta, PostParams};
use serde_json::json;

use crate::rbac::{rbac_server_with, robot};

/// A server with RBAC on (and the plugin as asked), the ServiceAccount `default/robot` bound
/// to a Role granting `verbs` on ConfigMaps and `extra` rules, and the Secret `owner`.
async fn server(enforced: bool, verbs: &[&str], extra: serde_json::Value) -> (ApiServer, Secret) {
    let (server, admin) =
        rbac_server_with(|builder| builder.owner_references_permission_enforcement(enforced)).await;
    let mut rules = vec![json!({"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs})];
    rules.extend(extra.as_array().cloned().unwrap_or_default());
    let role: Role =
        serde_json::from_value(json!({"metadata": {"name": "writer"}, "rules": rules})).unwrap();
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "writer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let owner = Secret {
        metadata: ObjectMeta {
            name: Some("owner".into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    let owner = Api::<Secret>::namespaced(admin, "default")
        .create(&PostParams::default(), &owner)
        .await
        .expect("owner");
    (server, owner)
}

fn robot_config_maps(server: &ApiServer) -> Api<ConfigMap> {
    Api::namespaced(robot(server), "default")
}

/// A ConfigMap `name` owned by `owner`, blocking its deletion or not.
fn owned(name: &str, owner: &Secret, block: bool) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "ownerReferences": [{
                "apiVersion": "v1", "kind": "Secret", "name": "owner",
                "uid": owner.metadata.uid.clone().unwrap_or_default(),
                "controller": true, "blockOwnerDeletion": block,
            }],
        },
    }))
    .unwrap()
}

fn refusal<T: std::fmt::Debug>(result: Result<T, Error>) -> (u16, String, String) {
    match result {
        Err(Error::Api(status)) => (status.code, status.reason.clone(), status.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn block_owner_deletion_needs_update_on_the_owners_finalizers() {
    let (server, owner) = server(true, &["create", "update", "delete"], json!([])).await;
    let cms = robot_config_maps(&server);
    let (code, reason, message) = refusal(
        cms.create(&PostParams::default(), &owned("child", &owner, true))
            .await,
    );
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "configmaps \"child\" is forbidden: cannot set blockOwnerDeletion if an ownerReference \
         refers to a resource you can't set finalizers on: , <nil>"
    );
    let denied = server.denials();
    assert!(
        denied
            .iter()
            .any(|d| d.is("update", "", "secrets/finalizers")
                && d.name.as_deref() == Some("owner")
                && d.namespace.as_deref() == Some("default")),
        "the missing permission is recorded: {denied:?}"
    );
    let admin: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    assert!(
        admin.get_opt("child").await.unwrap().is_none(),
        "a refused create stores nothing"
    );
    // Without blockOwnerDeletion the same reference needs nothing more than the create.
    cms.create(&PostParams::default(), &owned("plain", &owner, false))
        .await
        .expect("an owner reference that blocks nothing is admitted");
    // Turning blockOwnerDeletion on later is refused the same way.
    let (code, _, message) = refusal(
        cms.replace(
            "plain",
            &PostParams::default(),
            &owned("plain", &owner, true),
        )
        .await,
    );
    assert_eq!(code, 403, "{message}");
    assert!(message.contains("can't set finalizers on"), "{message}");
    let kept = admin
        .get("plain")
        .await
        .unwrap()
        .metadata
        .owner_references
        .unwrap();
    assert_eq!(
        kept[0].block_owner_deletion,
        Some(false),
        "the refused update changed nothing"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn update_on_the_owners_finalizers_admits_block_owner_deletion() {
    let finalizers =
        json!([{"apiGroups": [""], "resources": ["secrets/finalizers"], "verbs": ["update"]}]);
    let (server, owner) = server(true, &["create", "update", "delete"], finalizers).await;
    let cms = robot_config_maps(&server);
    let created = cms
        .create(&PostParams::default(), &owned("child", &owner, true))
        .await
        .expect("admitted with update on secrets/finalizers");
    assert_eq!(
        created.metadata.owner_references.unwrap()[0].block_owner_deletion,
        Some(true)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn changing_owner_references_on_update_needs_delete_on_the_object() {
    let (server, owner) = server(true, &["create", "update"], json!([])).await;
    let cms = robot_config_maps(&server);
    let mut plain: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "child"}})).unwrap();
    cms.create(&PostParams::default(), &plain)
        .await
        .expect("a create without owner references");
    plain.data = Some([("k".to_owned(), "v".to_owned())].into());
    cms.replace("child", &PostParams::default(), &plain)
        .await
        .expect("an update that leaves owner references alone needs no delete");
    let (code, reason, message) = refusal(
        cms.replace(
            "child",
            &PostParams::default(),
            &owned("child", &owner, false),
        )
        .await,
    );
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "configmaps \"child\" is forbidden: cannot set an ownerRef on a resource you can't \
         delete: , <nil>"
    );
    // A create may set owner references without delete (it could have not created at all).
    cms.create(&PostParams::default(), &owned("born-owned", &owner, false))
        .await
        .expect("owner references on create need no delete");
    server.shutdown().await;
}

#[tokio::test]
async fn the_plugin_is_off_unless_asked_for() {
    let (server, owner) = server(false, &["create"], json!([])).await;
    robot_config_maps(&server)
        .create(&PostParams::default(), &owned("child", &owner, true))
        .await
        .expect("without the plugin, RBAC alone decides");
    server.shutdown().await;
}

#[tokio::test]
async fn updating_every_finalizer_cluster_wide_admits_any_owner() {
    let (server, owner) = server(true, &["create"], json!([])).await;
    let admin = server.client().unwrap();
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "finalize-anything"},
        "rules": [{"apiGroups": ["*"], "resources": ["*/finalizers"], "verbs": ["update"]}],
    }))
    .unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "finalize-anything"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "finalize-anything"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(admin)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    robot_config_maps(&server)
        .create(&PostParams::default(), &owned("child", &owner, true))
        .await
        .expect("update on */finalizers cluster-wide covers every owner");
    server.shutdown().await;
}
