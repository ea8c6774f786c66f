//! SelfSubjectRulesReview in RBAC mode, with the real `kube::Client`: the rules of the
//! caller's roles in the namespace asked about, cluster-wide bindings included, and an
//! incomplete answer naming a binding whose role is missing.

use crate::rbac::{rbac_server_with, robot};

use k8s_openapi::api::authorization::v1::{
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec, SubjectRulesReviewStatus,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, Role, RoleBinding};
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::json;

/// The caller's rules in `namespace`.
async fn rules(client: &Client, namespace: &str) -> SubjectRulesReviewStatus {
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            namespace: Some(namespace.to_owned()),
        },
        ..SelfSubjectRulesReview::default()
    };
    Api::<SelfSubjectRulesReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .expect("rules review")
        .status
        .expect("status")
}

#[tokio::test]
async fn rules_reviews_list_the_callers_rules_in_a_namespace() {
    let (server, admin) = rbac_server_with(|builder| builder).await;
    let role: Role = serde_json::from_value(json!({"metadata": {"name": "settings-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"],
                   "resourceNames": ["settings"]}]}))
    .unwrap();
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({"metadata": {"name": "robot-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "settings-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]}))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();

    let robot = robot(&server);
    let in_default = rules(&robot, "default").await;
    assert!(!in_default.incomplete);
    let granted = in_default
        .resource_rules
        .iter()
        .find(|rule| rule.resources.as_deref() == Some(&["configmaps".to_owned()][..]))
        .expect("the role's rule");
    assert_eq!(granted.verbs, ["get", "list"]);
    assert_eq!(
        granted.resource_names.as_deref(),
        Some(&["settings".to_owned()][..])
    );
    // Every authenticated user's bootstrap grants: the reviews, and discovery.
    assert!(in_default.resource_rules.iter().any(|rule| {
        rule.resources
            .as_ref()
            .is_some_and(|r| r.contains(&"selfsubjectrulesreviews".to_owned()))
    }));
    assert!(in_default.non_resource_rules.iter().any(|rule| {
        rule.non_resource_urls
            .as_ref()
            .is_some_and(|urls| urls.contains(&"/healthz".to_owned()))
    }));
    // Elsewhere the role does not apply.
    let elsewhere = rules(&robot, "kube-system").await;
    assert!(
        !elsewhere
            .resource_rules
            .iter()
            .any(|rule| rule.resources.as_deref() == Some(&["configmaps".to_owned()][..])),
        "{elsewhere:?}"
    );
    // The admin is bound to cluster-admin: everything.
    let admin_rules = rules(&admin, "default").await;
    assert!(admin_rules.resource_rules.iter().any(
        |rule| rule.verbs == ["*"] && rule.resources.as_deref() == Some(&["*".to_owned()][..])
    ));

    // A binding to a missing role makes the answer incomplete, and says why.
    let dangling: ClusterRoleBinding =
        serde_json::from_value(json!({"metadata": {"name": "dangling"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]}))
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&PostParams::default(), &dangling)
        .await
        .unwrap();
    let partial = rules(&robot, "default").await;
    assert!(partial.incomplete);
    assert!(
        partial.evaluation_error.as_deref().is_some_and(
            |e| e.contains(r#"clusterrole.rbac.authorization.k8s.io "gone" not found"#)
        ),
        "{partial:?}"
    );
    server.shutdown().await;
}
