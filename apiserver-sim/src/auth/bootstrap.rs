//! The default roles and bindings every cluster starts with (the subset of upstream's
//! bootstrap policy that concerns API access): `cluster-admin` for `system:masters`,
//! discovery and health for authenticated users, self reviews for every user.

use serde_json::{Value, json};

use super::identity::{AUTHENTICATED, MASTERS};
use super::rbac::GROUP;

/// Paths every authenticated user may read: discovery, OpenAPI, health and version
/// (upstream's `system:discovery` and `system:public-info-viewer`).
const DISCOVERY_URLS: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
];
const PUBLIC_INFO_URLS: &[&str] = &["/healthz", "/livez", "/readyz", "/version", "/version/"];

fn metadata(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "ClusterRole", "metadata": metadata(name), "rules": rules})
}

fn binding_to_groups(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "ClusterRoleBinding",
        "metadata": metadata(name),
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
        "subjects": subjects,
    })
}

/// The bootstrap ClusterRoles and their ClusterRoleBindings.
pub(crate) fn policy() -> (Vec<Value>, Vec<Value>) {
    let roles = vec![
        cluster_role(
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role(
            "system:discovery",
            json!([{"nonResourceURLs": DISCOVERY_URLS, "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": PUBLIC_INFO_URLS, "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                 "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"],
                 "resources": ["selfsubjectreviews"], "verbs": ["create"]},
            ]),
        ),
    ];
    let bindings = vec![
        binding_to_groups("cluster-admin", &[MASTERS]),
        binding_to_groups("system:discovery", &[AUTHENTICATED]),
        binding_to_groups(
            "system:public-info-viewer",
            &[AUTHENTICATED, "system:unauthenticated"],
        ),
        binding_to_groups("system:basic-user", &[AUTHENTICATED]),
    ];
    (roles, bindings)
}
