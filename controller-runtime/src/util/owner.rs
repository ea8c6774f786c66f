//! Owner references: [`set_controller_reference`] and [`is_controlled_by`] (the child → owner
//! mapping behind the controller builder's `owns` is `kind::OwnerKind`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::core::ObjectMeta;

use crate::kind::{Kind, WatchScope, get_controller_of};
use crate::util::error::Error;

/// Whether `child`'s controller owner reference points at `owner` (same uid).
pub fn is_controlled_by<O: Resource>(child: &ObjectMeta, owner: &O) -> bool {
    match (get_controller_of(child), owner.meta().uid.as_deref()) {
        (Some(reference), Some(uid)) => reference.uid == uid,
        _ => false,
    }
}

/// Makes `owner` the controller of `child`: adds (or refreshes) an owner reference with
/// `controller: true` and `blockOwnerDeletion: true`, so the garbage collector deletes `child`
/// with its owner and an `owns` watch maps `child` back to `owner`.
///
/// Fails if `owner` lacks a name or uid (it must have been read from the API server), if `child`
/// is already controlled by another object, or if the reference would cross namespaces (a
/// namespaced owner must be in the child's namespace; a cluster-scoped child cannot have a
/// namespaced owner).
pub fn set_controller_reference<O, C>(owner: &O, child: &mut C) -> Result<(), Error>
where
    O: Kind,
    C: Resource,
{
    let kind = O::kind(&()).into_owned();
    let owner_meta = owner.meta();
    let name = owner_meta.name.clone().ok_or_else(|| Error::MissingField {
        kind: kind.clone(),
        field: "metadata.name",
    })?;
    let uid = owner_meta.uid.clone().ok_or_else(|| Error::MissingField {
        kind: kind.clone(),
        field: "metadata.uid",
    })?;
    let child_meta = child.meta_mut();
    if <O::Scope as WatchScope>::NAMESPACED {
        let reason = match (&owner_meta.namespace, &child_meta.namespace) {
            (_, None) => Some("a cluster-scoped object cannot have a namespaced owner".to_owned()),
            (Some(owner_ns), Some(child_ns)) if owner_ns != child_ns => Some(format!(
                "the owner is in namespace `{owner_ns}`, the object in `{child_ns}`"
            )),
            _ => None,
        };
        if let Some(reason) = reason {
            return Err(Error::CrossNamespaceOwner {
                owner: name,
                object: child_meta.name.clone().unwrap_or_default(),
                reason,
            });
        }
    }
    if let Some(existing) = get_controller_of(child_meta)
        && existing.uid != uid
    {
        return Err(Error::AlreadyOwned {
            object: child_meta.name.clone().unwrap_or_default(),
            kind: existing.kind.clone(),
            name: existing.name.clone(),
        });
    }
    let reference = OwnerReference {
        api_version: O::api_version(&()).into_owned(),
        kind,
        name,
        uid,
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let references = child_meta.owner_references.get_or_insert_with(Vec::new);
    references.retain(|existing| existing.uid != reference.uid);
    references.push(reference);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::OwnerKind;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};

    fn cm(ns: &str, name: &str, uid: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some(ns.into());
        cm.metadata.name = Some(name.into());
        cm.metadata.uid = Some(uid.into());
        cm
    }

    fn secret(ns: &str) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.namespace = Some(ns.into());
        secret.metadata.name = Some("s".into());
        secret
    }

    fn controller_owner_key<O: Kind>(child: &ObjectMeta) -> Option<indexer::ObjectKey> {
        OwnerKind::of::<O>().owner_key(child)
    }

    #[test]
    fn sets_and_reads_the_controller_reference() {
        let owner = cm("default", "owner", "uid-1");
        let mut child = secret("default");
        set_controller_reference(&owner, &mut child).unwrap();
        // Idempotent.
        set_controller_reference(&owner, &mut child).unwrap();
        let refs = child.metadata.owner_references.as_ref().unwrap();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].kind, "ConfigMap");
        assert_eq!(refs[0].api_version, "v1");
        assert!(is_controlled_by(&child.metadata, &owner));
        assert!(!is_controlled_by(
            &child.metadata,
            &cm("default", "owner", "uid-2")
        ));
        assert_eq!(get_controller_of(&child.metadata).unwrap().name, "owner");
        assert_eq!(
            controller_owner_key::<ConfigMap>(&child.metadata)
                .unwrap()
                .to_string(),
            "default/owner"
        );
        // Kind or group mismatch: no owner of that type.
        assert!(controller_owner_key::<Secret>(&child.metadata).is_none());
        assert!(controller_owner_key::<Deployment>(&child.metadata).is_none());

        let err =
            set_controller_reference(&cm("default", "other", "uid-3"), &mut child).unwrap_err();
        assert!(matches!(err, Error::AlreadyOwned { .. }), "{err}");
    }

    #[test]
    fn rejects_bad_owners() {
        let mut child = secret("default");
        let err = set_controller_reference(&cm("other", "owner", "u"), &mut child).unwrap_err();
        assert!(matches!(err, Error::CrossNamespaceOwner { .. }), "{err}");
        let mut unsaved = cm("default", "owner", "u");
        unsaved.metadata.uid = None;
        let err = set_controller_reference(&unsaved, &mut child).unwrap_err();
        assert!(
            matches!(
                err,
                Error::MissingField {
                    field: "metadata.uid",
                    ..
                }
            ),
            "{err}"
        );
        let mut ns = Namespace::default();
        ns.metadata.name = Some("team".into());
        ns.metadata.uid = Some("ns-uid".into());
        // A cluster-scoped owner may own a namespaced object; non-controller refs are ignored.
        set_controller_reference(&ns, &mut child).unwrap();
        assert_eq!(
            controller_owner_key::<Namespace>(&child.metadata)
                .unwrap()
                .to_string(),
            "team"
        );
        child.metadata.owner_references.as_mut().unwrap()[0].controller = Some(false);
        assert!(get_controller_of(&child.metadata).is_none());
    }
}
