//! The Foo CRD: versions `v1alpha1` and `v1` (served both, stored as `v1`), with the status
//! subresource. Its `spec.conversion` is set once the webhook server listens (`install.rs`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::core::crd::{MergeError, merge_crds};

use super::names::STORAGE_VERSION;
use super::{v1, v1alpha1};

/// The two-version CRD, without conversion (`strategy: None` until
/// `install_webhooks` points it at the server).
pub fn crd() -> Result<CustomResourceDefinition, MergeError> {
    merge_crds(vec![v1alpha1::Foo::crd(), v1::Foo::crd()], STORAGE_VERSION)
}
