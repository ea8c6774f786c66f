//! The built-in kinds as k8s-openapi types: every kind a Kubernetes server of the version
//! the `k8s-openapi` feature selects (`latest`) serves by default, in its GA versions.
//! Each row is read from the type itself ([`k8s_openapi::Resource`],
//! [`k8s_openapi::ListableResource`], its scope and its `Deserialize` field list); what the
//! types do not carry (short names, categories, verbs, subresources) is in
//! `builtin_traits.rs`.
//!
//! Not served: alpha and beta versions (off by default upstream), the subresource kinds
//! (`Scale`, `Eviction`, `TokenRequest`, `Binding`), the create-only review kinds
//! (`TokenReview`, `SelfSubjectReview`, `SubjectAccessReview` and friends), the
//! deprecated `ComponentStatus`, and the GA versions kube-apiserver v1.36 leaves off unless
//! its runtime config or feature gates turn them on (it answers 404 for them, and its
//! discovery does not list them): `certificates.k8s.io/v1` `ClusterTrustBundle` and
//! `PodCertificateRequest`, `resource.k8s.io/v1` `DeviceTaintRule`,
//! `storagemigration.k8s.io/v1` `StorageVersionMigration` (and so that whole group).

use serde::de::DeserializeOwned;

use super::builtin_schemas::{Definitions, Described};
use crate::machinery::typed::{Check, check, field_names};

/// One served (group, version, kind), as its k8s-openapi type describes it.
#[derive(Debug, Clone, Copy)]
pub struct TypedKind {
    /// API group ("" for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural resource name (the URL path segment).
    pub plural: &'static str,
    /// Kind of its lists.
    pub list_kind: &'static str,
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
    /// The typed check of its objects.
    pub check: Check,
    /// Its top-level JSON fields.
    pub fields: &'static [&'static str],
    /// Its OpenAPI schema definitions (with the `explain` feature).
    pub definitions: fn() -> Definitions,
}

impl TypedKind {
    /// Whether the type has a top-level field of this name.
    pub fn has_field(&self, name: &str) -> bool {
        self.fields.contains(&name)
    }
}

/// Namespaced or cluster-scoped, from a k8s-openapi scope type (subresource-scoped types
/// have no impl, so listing one fails to compile).
trait Scope {
    const NAMESPACED: bool;
}

impl Scope for k8s_openapi::NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for k8s_openapi::ClusterResourceScope {
    const NAMESPACED: bool = false;
}

fn row<T>() -> TypedKind
where
    T: k8s_openapi::ListableResource + DeserializeOwned + Described,
    T::Scope: Scope,
{
    TypedKind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        list_kind: T::LIST_KIND,
        namespaced: <T::Scope as Scope>::NAMESPACED,
        check: check::<T>,
        fields: field_names::<T>(),
        definitions: T::definitions,
    }
}

/// One row per listed k8s-openapi type.
macro_rules! typed_kinds {
    ($($t:ty),* $(,)?) => {
        vec![$(row::<$t>()),*]
    };
}

/// Every built-in (group, version, kind) served, preferred versions first.
pub fn typed_kinds() -> Vec<TypedKind> {
    use k8s_openapi::api::{
        admissionregistration, apps, autoscaling, batch, certificates, coordination, core,
        discovery, events, flowcontrol, networking, node, policy, rbac, resource, scheduling,
        storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
    typed_kinds![
        core::v1::ConfigMap,
        core::v1::Endpoints,
        core::v1::Event,
        core::v1::LimitRange,
        core::v1::Namespace,
        core::v1::Node,
        core::v1::PersistentVolume,
        core::v1::PersistentVolumeClaim,
        core::v1::Pod,
        core::v1::PodTemplate,
        core::v1::ReplicationController,
        core::v1::ResourceQuota,
        core::v1::Secret,
        core::v1::Service,
        core::v1::ServiceAccount,
        admissionregistration::v1::MutatingAdmissionPolicy,
        admissionregistration::v1::MutatingAdmissionPolicyBinding,
        admissionregistration::v1::MutatingWebhookConfiguration,
        admissionregistration::v1::ValidatingAdmissionPolicy,
        admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        admissionregistration::v1::ValidatingWebhookConfiguration,
        apiextensions::v1::CustomResourceDefinition,
        apiregistration::v1::APIService,
        apps::v1::ControllerRevision,
        apps::v1::DaemonSet,
        apps::v1::Deployment,
        apps::v1::ReplicaSet,
        apps::v1::StatefulSet,
        autoscaling::v2::HorizontalPodAutoscaler,
        autoscaling::v1::HorizontalPodAutoscaler,
        batch::v1::CronJob,
        batch::v1::Job,
        certificates::v1::CertificateSigningRequest,
        coordination::v1::Lease,
        discovery::v1::EndpointSlice,
        events::v1::Event,
        flowcontrol::v1::FlowSchema,
        flowcontrol::v1::PriorityLevelConfiguration,
        networking::v1::IPAddress,
        networking::v1::Ingress,
        networking::v1::IngressClass,
        networking::v1::NetworkPolicy,
        networking::v1::ServiceCIDR,
        node::v1::RuntimeClass,
        policy::v1::PodDisruptionBudget,
        rbac::v1::ClusterRole,
        rbac::v1::ClusterRoleBinding,
        rbac::v1::Role,
        rbac::v1::RoleBinding,
        resource::v1::DeviceClass,
        resource::v1::ResourceClaim,
        resource::v1::ResourceClaimTemplate,
        resource::v1::ResourceSlice,
        scheduling::v1::PriorityClass,
        storage::v1::CSIDriver,
        storage::v1::CSINode,
        storage::v1::CSIStorageCapacity,
        storage::v1::StorageClass,
        storage::v1::VolumeAttachment,
        storage::v1::VolumeAttributesClass,
    ]
}
