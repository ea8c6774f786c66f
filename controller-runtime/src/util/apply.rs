//! Writing desired state: [`create_or_update`] (read, mutate, write only if something changed)
//! and [`server_side_apply`] (let the API server merge a partial object under a field manager).
//!
//! Writing the reconciled object itself with them: the update comes back as a watch event that
//! the primary watch's predicates may drop — [`GenerationChanged`] drops every write of
//! metadata (labels, annotations, finalizers, owner references) or of the status. Never end a
//! reconcile waiting for that event: go on with the object the write returned, or return
//! [`Action::requeue`]. Writing owned objects is safe: their creation always passes, and
//! each write returns before the reconcile ends.
//!
//! [`GenerationChanged`]: crate::controller::predicate::GenerationChanged
//! [`Action::requeue`]: crate::controller::Action::requeue

use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde::Serialize;

use crate::kind::Kind;
use crate::util::error::Error;

/// What [`create_or_update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationResult {
    /// The object did not exist and was created.
    Created,
    /// The object existed and `mutate` changed it, so it was replaced.
    Updated,
    /// The object existed and `mutate` changed nothing: no write was made.
    Unchanged,
}

/// Reads the object `name` through `api` (or starts from `K::default()` with that name and the
/// `Api`'s namespace if it does not exist), applies `mutate`, and creates or replaces it — or does nothing if `mutate` changed nothing.
/// The replace carries the read `resourceVersion`, so a concurrent change makes it fail with a
/// conflict (retry the reconcile) rather than be overwritten. `mutate` must not change the name.
pub async fn create_or_update<K, F>(
    api: &Api<K>,
    name: &str,
    mutate: F,
) -> Result<(K, OperationResult), Error>
where
    K: Kind + Default + Serialize,
    F: FnOnce(&mut K),
{
    match api.get_opt(name).await? {
        None => {
            let mut obj = K::default();
            obj.meta_mut().name = Some(name.to_owned());
            // The namespace is known before `mutate` runs, so it can set owner references
            // (which refuse a namespaced owner on an object without a namespace).
            obj.meta_mut().namespace = api.namespace().map(str::to_owned);
            mutate(&mut obj);
            obj.meta_mut().name = Some(name.to_owned());
            let created = api.create(&PostParams::default(), &obj).await?;
            Ok((created, OperationResult::Created))
        }
        Some(existing) => {
            let mut desired = existing.clone();
            mutate(&mut desired);
            desired.meta_mut().name = Some(name.to_owned());
            if serde_json::to_value(&desired)? == serde_json::to_value(&existing)? {
                return Ok((existing, OperationResult::Unchanged));
            }
            let updated = api.replace(name, &PostParams::default(), &desired).await?;
            Ok((updated, OperationResult::Updated))
        }
    }
}

/// Server-side applies `obj` (a partial object with `apiVersion`, `kind`, `metadata.name` and
/// the fields this controller owns) as `field_manager`, forcing ownership of conflicting fields.
///
/// The object's `metadata.managedFields` are not sent (an API server refuses an apply that
/// carries them), so an object read from a cache that keeps them can be applied as is. A
/// `metadata.resourceVersion`, when set, is sent: the server then applies only to that version
/// and answers a conflict otherwise.
pub async fn server_side_apply<K>(api: &Api<K>, field_manager: &str, obj: &K) -> Result<K, Error>
where
    K: Kind + Serialize,
{
    let name = obj.meta().name.clone().ok_or_else(|| Error::MissingField {
        kind: "object".to_owned(),
        field: "metadata.name",
    })?;
    let params = PatchParams::apply(field_manager).force();
    if obj.meta().managed_fields.is_some() {
        let mut without_managed_fields = obj.clone();
        without_managed_fields.meta_mut().managed_fields = None;
        return Ok(api
            .patch(&name, &params, &Patch::Apply(&without_managed_fields))
            .await?);
    }
    Ok(api.patch(&name, &params, &Patch::Apply(obj)).await?)
}
