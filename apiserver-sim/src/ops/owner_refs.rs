//! `OwnerReferencesPermissionEnforcement`, the admission plugin that hardened clusters
//! (OpenShift among them) turn on and kube-apiserver leaves off by default: a writer may only
//! point an object at owners it could otherwise affect. Run for every create and update when
//! [`crate::ApiServerBuilder::owner_references_permission_enforcement`] is on (with RBAC), as
//! upstream decides:
//!
//! - a write that leaves `metadata.ownerReferences` as they were (or creates an object with
//!   none) passes; `pods/status` is exempt;
//! - an update that changes them needs `delete` on the object itself (an owner reference can
//!   get the object garbage-collected); a create does not;
//! - every reference that newly has `blockOwnerDeletion: true` needs `update` on the owner's
//!   `finalizers` subresource, by name, in the object's namespace (cluster-wide for a
//!   cluster-scoped owner), since it holds up the owner's foreground deletion — unless the
//!   writer may update the finalizers of anything (`*/finalizers` of every group, cluster-wide);
//! - a refusal is a 403 `Forbidden` on the written object, worded as upstream's, and is
//!   recorded with the other denials (the permission that was missing, without a path).

use std::sync::Arc;

use serde_json::Value;

use crate::auth::attributes::{Attributes, ResourceAttributes};
use crate::auth::denials::Denials;
use crate::auth::identity::Identity;
use crate::auth::rbac;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// The write being admitted: the object's resource, namespace and name, and the subresource
/// it is written through (empty for the object itself).
pub(crate) struct Written<'a> {
    /// The object's resource.
    pub info: &'a ResourceInfo,
    /// Its namespace (empty when cluster-scoped).
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
    /// `status`, `scale` or empty.
    pub subresource: &'a str,
}

/// The plugin, for one writer: who writes, and where its refusals are recorded.
#[derive(Debug, Clone)]
pub(crate) struct OwnerRefsAdmission {
    who: Identity,
    denials: Arc<Denials>,
}

impl OwnerRefsAdmission {
    /// The plugin for writes by `who`, recording refusals in `denials`.
    pub(crate) fn new(who: Identity, denials: Arc<Denials>) -> Self {
        Self { who, denials }
    }

    /// Admits the write of `new` over `old` (`None` for a create).
    pub(crate) fn admit(
        &self,
        st: &State,
        written: &Written<'_>,
        new: &Value,
        old: Option<&Value>,
    ) -> ApiResult<()> {
        admit(st, &self.who, written, new, old).map_err(|refusal| {
            let (check, error) = *refusal;
            if let Some(check) = check {
                self.denials.record(&self.who.user, &check, &error.message);
            }
            error
        })
    }
}

/// A refusal: the permission that was missing (none when the owner's kind is not served),
/// and the error the write gets.
type Refusal = Box<(Option<Attributes>, ApiError)>;

/// The plugin's decision on the write of `new` over `old` by `who`.
fn admit(
    st: &State,
    who: &Identity,
    written: &Written<'_>,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), Refusal> {
    let info = written.info;
    if info.group.is_empty() && info.plural == "pods" && written.subresource == "status" {
        return Ok(());
    }
    let new_refs = owner_refs(Some(new));
    let old_refs = owner_refs(old);
    let changing = match old {
        None => !new_refs.is_empty(),
        Some(_) => new_refs != old_refs,
    };
    if !changing {
        return Ok(());
    }
    if old.is_some() {
        let delete = request(
            "delete",
            &info.group,
            &info.plural,
            written.subresource,
            written.namespace,
            written.name,
        );
        let decision = rbac::authorize(st, who, &delete);
        if !decision.allowed {
            let why = format!(
                "cannot set an ownerRef on a resource you can't delete: {}, <nil>",
                decision.reason
            );
            return Err(Box::new((Some(delete), refused(written, &why))));
        }
    }
    let mut blocking = newly_blocking(&new_refs, &old_refs).peekable();
    if blocking.peek().is_none() {
        return Ok(());
    }
    // May the writer update the finalizers of anything, anywhere? Then every owner is fine.
    let anything = request("update", "*", "*", "finalizers", "", "*");
    if rbac::authorize(st, who, &anything).allowed {
        return Ok(());
    }
    for owner in blocking {
        let api_version = str_field(owner, "apiVersion");
        let kind = str_field(owner, "kind");
        let Some(owner_info) = resolve(st, api_version, kind) else {
            let why = format!(
                "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for \
                 APIVersion {api_version} Kind {kind}: no matches for kind {kind:?} in version \
                 {api_version:?}"
            );
            return Err(Box::new((None, refused(written, &why))));
        };
        let namespace = if owner_info.namespaced {
            written.namespace
        } else {
            ""
        };
        let finalizers = request(
            "update",
            &owner_info.group,
            &owner_info.plural,
            "finalizers",
            namespace,
            str_field(owner, "name"),
        );
        let decision = rbac::authorize(st, who, &finalizers);
        if !decision.allowed {
            let why = format!(
                "cannot set blockOwnerDeletion if an ownerReference refers to a resource you \
                 can't set finalizers on: {}, <nil>",
                decision.reason
            );
            return Err(Box::new((Some(finalizers), refused(written, &why))));
        }
    }
    Ok(())
}

/// The owner references of `obj` (none without an object or a list).
fn owner_refs(obj: Option<&Value>) -> Vec<Value> {
    obj.and_then(|o| o.pointer("/metadata/ownerReferences"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn str_field<'a>(reference: &'a Value, field: &str) -> &'a str {
    reference.get(field).and_then(Value::as_str).unwrap_or("")
}

fn blocks(reference: &Value) -> bool {
    reference.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true)
}

/// The references of `new` that block their owner's deletion where the reference with the
/// same uid in `old` did not (or there was none).
fn newly_blocking<'a>(new: &'a [Value], old: &[Value]) -> impl Iterator<Item = &'a Value> {
    new.iter().filter(move |reference| {
        blocks(reference)
            && !old.iter().any(|before| {
                str_field(before, "uid") == str_field(reference, "uid") && blocks(before)
            })
    })
}

/// The served resource of `kind` in `apiVersion` (`group/version`, or `version` for core).
fn resolve<'a>(st: &'a State, api_version: &str, kind: &str) -> Option<&'a ResourceInfo> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    st.served()
        .find(|info| {
            info.group == group && info.kind == kind && info.versions.iter().any(|v| v == version)
        })
        .map(AsRef::as_ref)
}

/// A resource request in the authorizer's terms.
fn request(
    verb: &str,
    group: &str,
    resource: &str,
    subresource: &str,
    namespace: &str,
    name: &str,
) -> Attributes {
    Attributes {
        verb: verb.to_owned(),
        path: String::new(),
        resource: Some(ResourceAttributes {
            group: group.to_owned(),
            version: String::new(),
            resource: resource.to_owned(),
            subresource: (!subresource.is_empty()).then(|| subresource.to_owned()),
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            name: (!name.is_empty()).then(|| name.to_owned()),
        }),
    }
}

/// Upstream's admission refusal: 403 `Forbidden` naming the written object.
fn refused(written: &Written<'_>, why: &str) -> ApiError {
    ApiError::forbidden(written.info, written.name, why)
}
