//! [`OwnerKind`]: a kind as owner references name it — what maps an owned object back to its
//! owner (the controller builder's `owns`) — and [`get_controller_of`].

use indexer::ObjectKey;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::ObjectMeta;

use crate::kind::dynamic::DynamicKind;
use crate::kind::scope::{Kind, WatchScope};

/// The owner reference marked `controller: true`, if any (there is at most one).
pub fn get_controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()?
        .iter()
        .find(|reference| reference.controller == Some(true))
}

/// The group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

/// What an owner reference must name to point at an object of one kind: the kind, its API
/// group (any version), and whether the owner lives in the child's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerKind {
    pub(crate) kind: String,
    pub(crate) group: String,
    pub(crate) namespaced: bool,
}

impl OwnerKind {
    /// The owner kind of the typed kind `O`.
    pub(crate) fn of<O: Kind>() -> Self {
        Self {
            kind: O::kind(&()).into_owned(),
            group: O::group(&()).into_owned(),
            namespaced: <O::Scope as WatchScope>::NAMESPACED,
        }
    }

    /// The owner kind of the dynamic kind `kind`.
    pub(crate) fn dynamic(kind: &DynamicKind) -> Self {
        Self {
            kind: kind.resource.kind.clone(),
            group: kind.resource.group.clone(),
            namespaced: kind.namespaced,
        }
    }

    /// The key of the owner named by `child`'s controller owner reference, if it is of this
    /// kind.
    pub(crate) fn owner_key(&self, child: &ObjectMeta) -> Option<ObjectKey> {
        let reference = get_controller_of(child)?;
        if reference.kind != self.kind || group_of(&reference.api_version) != self.group {
            return None;
        }
        let namespace = if self.namespaced {
            Some(child.namespace.as_deref()?)
        } else {
            None
        };
        ObjectKey::new(namespace, &reference.name).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};

    fn reference(kind: &str, api_version: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: "uid".into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }
    }

    fn child(references: Vec<OwnerReference>) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("default".into()),
            name: Some("child".into()),
            owner_references: Some(references),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn maps_the_controller_reference_of_the_owner_kind_only() {
        let meta = child(vec![reference("ConfigMap", "v1", "owner", true)]);
        let key = OwnerKind::of::<ConfigMap>().owner_key(&meta);
        assert_eq!(
            key.map(|key| key.to_string()).as_deref(),
            Some("default/owner")
        );
        // Kind or group mismatch: no owner of that type.
        assert!(OwnerKind::of::<Secret>().owner_key(&meta).is_none());
        assert!(OwnerKind::of::<Deployment>().owner_key(&meta).is_none());
        // Any version of the group matches.
        let meta = child(vec![reference("Deployment", "apps/v1beta2", "web", true)]);
        let key = OwnerKind::of::<Deployment>().owner_key(&meta);
        assert_eq!(
            key.map(|key| key.to_string()).as_deref(),
            Some("default/web")
        );
    }

    #[test]
    fn a_cluster_scoped_owner_has_no_namespace_and_non_controllers_are_ignored() {
        let meta = child(vec![reference("Namespace", "v1", "team", true)]);
        let key = OwnerKind::of::<Namespace>().owner_key(&meta);
        assert_eq!(key.map(|key| key.to_string()).as_deref(), Some("team"));
        let meta = child(vec![reference("Namespace", "v1", "team", false)]);
        assert!(get_controller_of(&meta).is_none());
        assert!(OwnerKind::of::<Namespace>().owner_key(&meta).is_none());
    }
}
