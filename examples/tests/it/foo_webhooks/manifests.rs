//! The manifests of `examples/manifests/foo-webhooks/` are what their comments say: an example
//! Foo the webhooks accept (and default), and one the validator refuses.

use super::example::admission::check_deployment;
use super::example::{v1, v1alpha1};
use kube::Resource;

fn manifest(name: &str) -> String {
    let path = format!(
        "{}/manifests/foo-webhooks/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_example_is_a_v1alpha1_foo_without_replicas() {
    let text = manifest("example-foo.yaml");
    assert!(text.contains(&format!("apiVersion: {}", v1alpha1::Foo::api_version(&()))));
    let foo: v1alpha1::Foo = serde_yaml::from_str(&text).unwrap();
    assert_eq!(foo.spec.deployment_name, "example-foo");
    assert_eq!(foo.spec.replicas, None);
}

#[test]
fn the_invalid_foo_is_refused_by_the_validator() {
    let text = manifest("invalid-foo.yaml");
    assert!(text.contains(&format!("apiVersion: {}", v1::Foo::api_version(&()))));
    let foo: v1::Foo = serde_yaml::from_str(&text).unwrap();
    assert!(check_deployment(&foo.spec.deployment).is_err());
}
