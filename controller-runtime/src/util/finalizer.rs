//! [`finalizer`]: run cleanup before an object is deleted. The helper adds the finalizer on the
//! first reconcile and goes on in that same reconcile, hands the object to the cleanup branch
//! once it is being deleted, and removes the finalizer only after cleanup succeeded. Both patches are JSON patches guarded by a `test`
//! operation, so a concurrent edit of the finalizer list fails the patch (and the reconcile is
//! retried) instead of being overwritten.

use std::future::Future;
use std::sync::Arc;

use kube::Api;
use serde_json::{Value, json};

use crate::kind::Kind;
use crate::util::error::Error;

/// What the finalizer helper asks the caller to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object is live (and carries the finalizer): reconcile it as usual.
    Apply(Arc<K>),
    /// The object is being deleted: clean up external state. On success the finalizer is
    /// removed and the API server completes the deletion; on error it stays and cleanup is
    /// retried.
    Cleanup(Arc<K>),
}

/// Drives `obj` through the finalizer named `name` (e.g. `example.com/cleanup`) using `api`
/// (scoped to the object's namespace):
///
/// - live object without the finalizer: adds it, then calls `reconcile(Apply(obj))` at once
///   with the object the API server returned, and returns its result. The reconcile does not
///   wait for the event of its own update to come back: that update changes metadata only,
///   which predicates such as
///   [`GenerationChanged`](crate::controller::predicate::GenerationChanged) drop, so the event
///   may never reconcile the object again;
/// - live object with it: calls `reconcile(Apply(obj))` and returns its result;
/// - object being deleted with it: calls `reconcile(Cleanup(obj))`; if that succeeds, removes
///   the finalizer and returns `T::default()` — [`Action::done`] for an [`Action`] (what the
///   cleanup returned is ignored: once the finalizer is gone the API server deletes the object,
///   so there is nothing to requeue); if it fails, keeps the finalizer and returns the error, so
///   the cleanup is retried with backoff;
/// - object being deleted without it: nothing to do (`T::default()`).
///
/// `reconcile` returns what a reconcile does — usually `Result<Action, ReconcileError>` — and
/// its error type takes this module's [`Error`] too (with `From`, as
/// [`ReconcileError`] and every error that converts `util::Error` do).
///
/// The patches are JSON patches guarded by a `test` of the finalizer list, so a concurrent edit
/// fails the patch (a conflict: the reconcile is retried) instead of being overwritten.
///
/// [`Action`]: crate::controller::Action
/// [`Action::done`]: crate::controller::Action::done
/// [`ReconcileError`]: crate::controller::ReconcileError
pub async fn finalizer<K, F, Fut, T, E>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<T, E>
where
    K: Kind,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Default,
    E: From<Error> + std::fmt::Display,
{
    let meta = obj.meta();
    let object_name = meta.name.clone().ok_or_else(|| Error::MissingField {
        kind: "object".to_owned(),
        field: "metadata.name",
    })?;
    let finalizers = meta.finalizers.clone().unwrap_or_default();
    let position = finalizers.iter().position(|existing| existing == name);
    match (meta.deletion_timestamp.is_some(), position) {
        (false, Some(_)) => reconcile(FinalizerEvent::Apply(obj)).await,
        (true, Some(index)) => {
            // The cleanup's requested action is moot: once the finalizer is removed the
            // object goes away.
            let _action = reconcile(FinalizerEvent::Cleanup(Arc::clone(&obj)))
                .await
                .inspect_err(|error| {
                    tracing::warn!(finalizer = name, %error, "finalizer cleanup failed; keeping the finalizer");
                })?;
            let path = format!("/metadata/finalizers/{index}");
            json_patch(
                api,
                &object_name,
                json!([
                    {"op": "test", "path": path, "value": name},
                    {"op": "remove", "path": path},
                ]),
            )
            .await?;
            tracing::debug!(finalizer = name, "cleanup done; finalizer removed");
            Ok(T::default())
        }
        (false, None) => {
            let patch = if finalizers.is_empty() {
                json!([
                    {"op": "test", "path": "/metadata/finalizers", "value": Value::Null},
                    {"op": "add", "path": "/metadata/finalizers", "value": [name]},
                ])
            } else {
                json!([
                    {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
                    {"op": "add", "path": "/metadata/finalizers/-", "value": name},
                ])
            };
            let updated = json_patch(api, &object_name, patch).await?;
            tracing::debug!(finalizer = name, "finalizer added");
            reconcile(FinalizerEvent::Apply(Arc::new(updated))).await
        }
        (true, None) => Ok(T::default()),
    }
}

/// Sends an RFC 6902 JSON patch (kube's typed JSON patch needs an extra feature).
async fn json_patch<K: Kind>(api: &Api<K>, name: &str, patch: Value) -> Result<K, Error> {
    let url = format!("{}/{}", api.resource_url(), name);
    let body = serde_json::to_vec(&patch)?;
    let request = http::Request::patch(url)
        .header(http::header::CONTENT_TYPE, "application/json-patch+json")
        .body(body)
        .map_err(|error| {
            kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(error))
        })?;
    Ok(api.clone().into_client().request::<K>(request).await?)
}
