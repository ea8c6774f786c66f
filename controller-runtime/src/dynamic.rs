//! [`DynamicKind`]: a kind known only at run time — a CRD found by discovery, a kind named in
//! configuration — watched as `kube`'s [`DynamicObject`](kube::api::DynamicObject) (kube-runtime's
//! `Controller::new_with`).

use kube::Client;
use kube::api::ApiResource;
use kube::core::GroupVersionKind;
use kube::discovery::{self, Scope};

use crate::error::Error;

/// A kind watched as [`DynamicObject`](kube::api::DynamicObject): its [`ApiResource`] (group,
/// version, kind, plural) and whether its objects live in namespaces (a namespaced kind is
/// cached in the manager's default namespaces, a cluster-scoped one cluster-wide).
///
/// Give it to [`Controller::for_dynamic`](crate::Controller::for_dynamic),
/// [`ControllerBuilder::owns_dynamic`](crate::ControllerBuilder::owns_dynamic) and
/// [`ControllerBuilder::watches_dynamic`](crate::ControllerBuilder::watches_dynamic); read its
/// cache with [`Cache::dynamic_lister`](crate::Cache::dynamic_lister).
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

    /// Asks the API server's discovery for `group`/`version` `kind`: its plural and scope.
    /// [`Error::KindNotServed`] if the server does not serve it (no such CRD, or not
    /// established yet).
    pub async fn discover(
        client: &Client,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Self, Error> {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match discovery::pinned_kind(client, &gvk).await {
            Ok((resource, capabilities)) => Ok(Self {
                resource,
                namespaced: capabilities.scope == Scope::Namespaced,
            }),
            Err(kube::Error::Api(status)) if status.code == 404 => Err(not_served(&gvk)),
            Err(kube::Error::Discovery(_)) => Err(not_served(&gvk)),
            Err(error) => Err(Error::Kube(error)),
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
        describe(&self.resource)
    }
}

/// A dynamic kind's name in messages.
pub(crate) fn describe(resource: &ApiResource) -> String {
    format!(
        "{} ({}, resource {})",
        resource.kind, resource.api_version, resource.plural
    )
}

fn not_served(gvk: &GroupVersionKind) -> Error {
    let api_version = if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    };
    Error::KindNotServed {
        kind: format!("{} ({api_version})", gvk.kind),
        waited: None,
    }
}
