//! `Foo` at `webhooks.kube-rt.dev/v1`: the hub of the conversions and the storage version. The
//! Deployment's name and replicas live together under `spec.deployment`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Foo: a Deployment named `deployment.name` with `deployment.replicas`
/// pods.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "webhooks.kube-rt.dev",
    version = "v1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The Deployment the controller keeps for this Foo.
    #[serde(default)]
    pub deployment: FooDeployment,
}

/// The Deployment a Foo asks for. The validating webhook checks it; the defaulting webhook
/// sets `replicas` when absent.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FooDeployment {
    /// Name of the Deployment: a lowercase RFC 1123 subdomain, fixed once set.
    #[serde(default)]
    pub name: String,
    /// Desired replicas, 1 to 10 (the defaulting webhook sets 1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// The observed state of a Foo, written by the controller.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Available replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}

/// A `Foo` named `name` (no namespace) asking for Deployment `deployment` with `replicas`.
pub fn new_foo(name: &str, deployment: &str, replicas: Option<i32>) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment: FooDeployment {
                name: deployment.to_owned(),
                replicas,
            },
        },
    )
}
