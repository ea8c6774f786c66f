//! [`DynamicKind`]: a kind known only at run time — a CRD found by discovery, a kind named in
//! configuration — watched as `kube`'s [`DynamicObject`](kube::api::DynamicObject) (kube-runtime's
//! `Controller::new_with`).

use kube::api::ApiResource;

/// A kind watched as [`DynamicObject`](kube::api::DynamicObject): its [`ApiResource`] (group,
/// version, kind, plural) and whether its objects live in namespaces (a namespaced kind is
/// cached in the manager's default namespaces, a cluster-scoped one cluster-wide).
///
/// Watch it with [`Watch::dynamic`](crate::controller::Watch::dynamic), read its cache with
/// [`Cache::dynamic_lister`](crate::cache::Cache::dynamic_lister), give it cache settings with
/// [`ByObject::dynamic`](crate::cache::ByObject::dynamic); ask the API server for one with
/// [`DynamicKind::discover`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicKind {
    pub(crate) resource: ApiResource,
    pub(crate) namespaced: bool,
}

impl DynamicKind {
    /// A namespaced kind served as `resource`.
    pub fn namespaced(resource: ApiResource) -> Self {
        Self {
            resource,
            namespaced: true,
        }
    }

    /// A cluster-scoped kind served as `resource`.
    pub fn cluster(resource: ApiResource) -> Self {
        Self {
            resource,
            namespaced: false,
        }
    }

    /// The kind's resource.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// Whether the kind's objects live in namespaces.
    pub fn is_namespaced(&self) -> bool {
        self.namespaced
    }

    /// The kind's name in messages, e.g. `Widget (example.com/v1, resource widgets)`.
    pub(crate) fn describe(&self) -> String {
        let resource = &self.resource;
        format!(
            "{} ({}, resource {})",
            resource.kind, resource.api_version, resource.plural
        )
    }

    /// What identifies the kind among dynamic kinds: `group/version/plural`.
    pub(crate) fn id(&self) -> String {
        let resource = &self.resource;
        format!(
            "{}/{}/{}",
            resource.group, resource.version, resource.plural
        )
    }
}
