//! The `Foo` custom resource (`samplecontroller.k8s.io/v1alpha1`), as in kubernetes/sample-controller
//! (`pkg/apis/samplecontroller/v1alpha1`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Value of the `api-approved.kubernetes.io` annotation: the API server refuses CRDs in a
/// `*.k8s.io` group without it (KEP-2337). This is the value upstream uses.
pub const API_APPROVAL: &str = "unapproved, experimental-only; please get an approval from \
Kubernetes API reviewers if you're trying to develop a CRD in the *.k8s.io or *.kubernetes.io groups";

/// The desired state of a Foo: a Deployment named `deploymentName` with `replicas` pods.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    annotation(
        "api-approved.kubernetes.io",
        "unapproved, experimental-only; please get an approval from Kubernetes API reviewers if you're trying to develop a CRD in the *.k8s.io or *.kubernetes.io groups"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// Name of the Deployment the controller creates and owns. Empty (or absent) makes the Foo
    /// invalid: the controller logs it and does nothing.
    #[serde(default)]
    pub deployment_name: String,
    /// Desired replicas of the Deployment, 1 to 10; absent leaves the Deployment's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10))]
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

/// The `Foo` CRD, with the status subresource and the approval annotation. Like upstream's,
/// its schema declares no required fields (kube-derive would require `spec`).
pub fn crd() -> CustomResourceDefinition {
    let mut crd = Foo::crd();
    for version in &mut crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|schema| schema.open_api_v3_schema.as_mut())
        {
            schema.required = None;
        }
    }
    crd
}

/// The CRD as YAML, ready for `kubectl apply -f -`.
pub fn crd_yaml() -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(&crd())
}

/// A `Foo` named `name` (no namespace) whose Deployment is `deployment_name`.
pub fn new_foo(name: &str, deployment_name: &str, replicas: Option<i32>) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: deployment_name.to_owned(),
            replicas,
        },
    )
}
