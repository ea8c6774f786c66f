//! CRDs from a directory of YAML files are served when the environment starts; a refused CRD is
//! an error naming it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use testenv::{Error, TestEnv};

fn crd_yaml(plural: &str, kind: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.example.dev
spec:
  group: example.dev
  scope: Namespaced
  names: {{plural: {plural}, singular: {singular}, kind: {kind}}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
",
        singular = plural.trim_end_matches('s'),
    )
}

#[tokio::test]
async fn every_crd_of_a_directory_is_served_at_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("widgets.yaml"),
        crd_yaml("widgets", "Widget"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("gadgets.yml"),
        crd_yaml("gadgets", "Gadget"),
    )
    .unwrap();
    let env = TestEnv::builder()
        .crd_dir(dir.path())
        .start()
        .await
        .unwrap();

    for kind in ["Widget", "Gadget"] {
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("example.dev", "v1", kind));
        let api: Api<DynamicObject> = Api::default_namespaced_with(env.client(), &resource);
        let object = DynamicObject::new("first", &resource);
        // No wait between start and the first request: the kind is served already.
        api.create(&PostParams::default(), &object).await.unwrap();
    }
    env.stop().await.unwrap();
}

#[tokio::test]
async fn a_crd_the_server_refuses_is_an_error_naming_it() {
    let mut crd: CustomResourceDefinition =
        serde_yaml::from_str(&crd_yaml("widgets", "Widget")).unwrap();
    crd.spec.scope = "Galactic".to_owned();
    let error = TestEnv::builder().crd(crd).start().await.unwrap_err();
    assert!(
        matches!(&error, Error::Crd { name, .. } if name == "widgets.example.dev"),
        "{error}"
    );
    assert!(error.to_string().contains("Galactic"), "{error}");
}

#[tokio::test]
async fn a_crd_installed_later_is_served_once_the_call_returns() {
    let env = TestEnv::start().await.unwrap();
    let crd: CustomResourceDefinition =
        serde_yaml::from_str(&crd_yaml("widgets", "Widget")).unwrap();
    env.install_crd(&crd).await.unwrap();
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("example.dev", "v1", "Widget"));
    let api: Api<DynamicObject> = Api::default_namespaced_with(env.client(), &resource);
    assert!(
        api.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
