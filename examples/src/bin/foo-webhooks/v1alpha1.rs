//! `Foo` at `webhooks.kube-rt.dev/v1alpha1`: the first version, shaped like the
//! sample-controller's Foo (`spec.deploymentName`, `spec.replicas`). A spoke: it converts to
//! and from the hub, [`v1`], losing nothing either way.

use controller_runtime::webhook::{ConversionError, Convertible};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::v1;

/// The desired state of a Foo: a Deployment named `deploymentName` with `replicas` pods.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "webhooks.kube-rt.dev",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// Name of the Deployment (`spec.deployment.name` in v1).
    #[serde(default)]
    pub deployment_name: String,
    /// Desired replicas (`spec.deployment.replicas` in v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// The observed state of a Foo, as in v1.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Available replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}

impl Convertible<v1::Foo> for Foo {
    fn convert_to_hub(&self) -> Result<v1::Foo, ConversionError> {
        Ok(v1::Foo {
            metadata: self.metadata.clone(),
            spec: v1::FooSpec {
                deployment: v1::FooDeployment {
                    name: self.spec.deployment_name.clone(),
                    replicas: self.spec.replicas,
                },
            },
            status: self.status.as_ref().map(|status| v1::FooStatus {
                available_replicas: status.available_replicas,
            }),
        })
    }

    fn convert_from_hub(hub: &v1::Foo) -> Result<Self, ConversionError> {
        Ok(Foo {
            metadata: hub.metadata.clone(),
            spec: FooSpec {
                deployment_name: hub.spec.deployment.name.clone(),
                replicas: hub.spec.deployment.replicas,
            },
            status: hub.status.as_ref().map(|status| FooStatus {
                available_replicas: status.available_replicas,
            }),
        })
    }
}

/// A `Foo` named `name` (no namespace) asking for Deployment `deployment_name` with `replicas`.
pub fn new_foo(name: &str, deployment_name: &str, replicas: Option<i32>) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: deployment_name.to_owned(),
            replicas,
        },
    )
}
