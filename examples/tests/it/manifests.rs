//! `examples/manifests/` stays in step with the code: the CRD (shaped as upstream's) and the
//! roles are the ones the code generates, the example Foo is valid.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;

use crate::sample_controller::foo::{API_APPROVAL, Foo, crd, crd_yaml};
use crate::sample_controller::operator::Settings;
use crate::sample_controller::rbac::{rbac_policy, rbac_yaml};

fn manifest(name: &str) -> String {
    let path = format!("{}/manifests/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn crd_manifest_is_the_generated_one() {
    assert_eq!(
        manifest("crd.yaml"),
        crd_yaml().unwrap(),
        "regenerate with `sample-controller crd`"
    );
    let parsed: CustomResourceDefinition = serde_yaml::from_str(&manifest("crd.yaml")).unwrap();
    assert_eq!(parsed, crd());
}

#[test]
fn example_foo_is_valid() {
    let foo: Foo = serde_yaml::from_str(&manifest("example-foo.yaml")).unwrap();
    assert_eq!(foo.metadata.name.as_deref(), Some("example-foo"));
    assert_eq!(foo.spec.deployment_name, "example-foo");
    assert_eq!(foo.spec.replicas, Some(1));
}

#[tokio::test]
async fn rbac_manifest_is_the_generated_one() {
    let generated = rbac_yaml(&Settings::leader_elected("default"))
        .await
        .unwrap();
    assert_eq!(
        manifest("rbac.yaml"),
        generated,
        "regenerate with `sample-controller rbac > examples/manifests/rbac.yaml`"
    );
    let (cluster_role, lease_role) = rbac_manifest();
    let policy = rbac_policy(&Settings::leader_elected("default"))
        .await
        .unwrap();
    assert_eq!(Some(cluster_role), policy.cluster_role);
    assert_eq!(
        policy.roles,
        [lease_role],
        "a cluster-wide controller needs one Role: the Lease's"
    );
}

#[tokio::test]
async fn install_crd_adds_exactly_the_crd_rules() {
    let plain = rbac_policy(&Settings::leader_elected("default"))
        .await
        .unwrap();
    let installing = rbac_policy(&Settings {
        install_crd: true,
        ..Settings::leader_elected("default")
    })
    .await
    .unwrap();
    let rules = |policy: &controller_runtime::rbac::RbacPolicy| {
        policy
            .cluster_role
            .as_ref()
            .and_then(|role| role.rules.clone())
            .unwrap_or_default()
    };
    let added: Vec<_> = rules(&installing)
        .into_iter()
        .filter(|rule| !rules(&plain).contains(rule))
        .map(|rule| (rule.resources, rule.resource_names, rule.verbs))
        .collect();
    let crds = Some(vec!["customresourcedefinitions".to_owned()]);
    assert_eq!(
        added,
        [
            (crds.clone(), None, vec!["create".to_owned()]),
            (
                crds,
                Some(vec!["foos.samplecontroller.k8s.io".to_owned()]),
                vec!["get".to_owned()]
            ),
        ]
    );
    assert_eq!(installing.roles, plain.roles, "the Lease Role is unchanged");
}

/// `rbac.yaml`'s two documents: the ClusterRole and the Role of the Lease's namespace.
pub(crate) fn rbac_manifest() -> (ClusterRole, Role) {
    let text = manifest("rbac.yaml");
    let mut documents = serde_yaml::Deserializer::from_str(&text);
    let cluster_role = ClusterRole::deserialize(documents.next().unwrap()).unwrap();
    let role = Role::deserialize(documents.next().unwrap()).unwrap();
    assert!(documents.next().is_none(), "rbac.yaml has two documents");
    (cluster_role, role)
}

#[test]
fn account_binding_and_deployment_fit_together() {
    let account: ServiceAccount = serde_yaml::from_str(&manifest("service-account.yaml")).unwrap();
    let binding: ClusterRoleBinding =
        serde_yaml::from_str(&manifest("cluster-role-binding.yaml")).unwrap();
    let lease_binding: RoleBinding = serde_yaml::from_str(&manifest("role-binding.yaml")).unwrap();
    let (_, lease_role) = rbac_manifest();
    assert_eq!(lease_binding.role_ref.kind, "Role");
    assert_eq!(
        Some(&lease_binding.role_ref.name),
        lease_role.metadata.name.as_ref()
    );
    assert_eq!(
        lease_binding.metadata.namespace,
        lease_role.metadata.namespace
    );
    assert_eq!(lease_binding.subjects, binding.subjects);
    let deployment: Deployment = serde_yaml::from_str(&manifest("deployment.yaml")).unwrap();
    assert_eq!(binding.role_ref.name, "sample-controller");
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(Some(&subject.name), account.metadata.name.as_ref());
    assert_eq!(subject.namespace, account.metadata.namespace);
    let pod = deployment.spec.template.spec.unwrap();
    assert_eq!(pod.service_account_name, account.metadata.name);
    assert_eq!(deployment.metadata.namespace, account.metadata.namespace);
    let container = &pod.containers[0];
    let args = container.args.clone().unwrap();
    assert!(args.iter().any(|arg| arg == "--leader-elect"), "{args:?}");
    assert!(args.iter().any(|arg| arg == "--metrics-addr"), "{args:?}");
    let path = |probe: &Option<k8s_openapi::api::core::v1::Probe>| {
        probe
            .as_ref()
            .and_then(|probe| probe.http_get.as_ref())
            .and_then(|get| get.path.clone())
    };
    assert_eq!(path(&container.liveness_probe).as_deref(), Some("/healthz"));
    assert_eq!(path(&container.readiness_probe).as_deref(), Some("/readyz"));
}

#[test]
fn crd_matches_upstream_shape() {
    let crd = crd();
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("foos.samplecontroller.k8s.io")
    );
    let annotations = crd.metadata.annotations.unwrap();
    assert_eq!(annotations["api-approved.kubernetes.io"], API_APPROVAL);
    assert_eq!(crd.spec.scope, "Namespaced");
    let version = &crd.spec.versions[0];
    assert_eq!(version.name, "v1alpha1");
    assert!(version.served && version.storage);
    assert!(version.subresources.as_ref().unwrap().status.is_some());
    let schema = serde_json::to_value(&version.schema).unwrap();
    let replicas = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"];
    assert_eq!(replicas["minimum"].as_f64(), Some(1.0));
    assert_eq!(replicas["maximum"].as_f64(), Some(10.0));
    assert_eq!(replicas["type"], "integer");
    assert!(schema["openAPIV3Schema"].get("required").is_none());
    assert!(
        schema["openAPIV3Schema"]["properties"]["spec"]
            .get("required")
            .is_none()
    );
}

#[test]
fn rbac_takes_the_namespace_before_or_after_the_subcommand() {
    let bin = env!("CARGO_BIN_EXE_sample-controller");
    let print = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "sample-controller {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let after = print(&["rbac", "--namespace", "team-a"]);
    let before = print(&["--namespace", "team-a", "rbac"]);
    assert_eq!(after, before);
    assert!(after.contains("kind: Role\n"), "{after}");
    assert!(after.contains("namespace: team-a"), "{after}");
}
