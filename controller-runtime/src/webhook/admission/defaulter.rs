//! [`Defaulter`]: typed defaulting of one kind — the handler mutates the object in place and the
//! hook answers with the RFC 6902 patch from the object as sent to the object as defaulted.

use std::future::Future;
use std::marker::PhantomData;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use kube::core::admission::{AdmissionResponse, Operation};
use serde::Serialize;

use crate::kind::Kind;
use crate::webhook::admission::hook::AdmissionHook;
use crate::webhook::admission::patch::defaulting_patch;
use crate::webhook::admission::response;
use crate::webhook::admission::response::{Denial, Warnings};
use crate::webhook::admission::review::AdmissionRequest;
use crate::webhook::admission::review::DecodedReview;
use crate::webhook::admission::validator::{check_kind, typed};

/// Sets defaults on objects of kind `K` (controller-runtime's `CustomDefaulter`): mutate the
/// object in place; the server computes the JSON patch (`patchType: JSONPatch`) from the object
/// as the API server sent it to the object as you left it — you never write a patch.
/// Registered with [`Webhook::defaulter`](crate::webhook::Webhook::defaulter), served on
/// `/mutate-<group>-<version>-<kind>`, called on `CREATE` and `UPDATE` (a `DELETE` or
/// `CONNECT` is allowed without calling it).
///
/// Fields the API server sent that `K` does not know (a newer schema, say) are left alone: the
/// patch only holds what the defaulter changed. Returning a [`Denial`] refuses the request.
///
/// ```
/// use controller_runtime::webhook::{AdmissionRequest, Defaulter, Denial};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct ManagedBy;
///
/// impl Defaulter<ConfigMap> for ManagedBy {
///     async fn default(&self, config: &mut ConfigMap, _request: &AdmissionRequest) -> Result<(), Denial> {
///         config
///             .metadata
///             .labels
///             .get_or_insert_default()
///             .entry("app.kubernetes.io/managed-by".into())
///             .or_insert_with(|| "my-operator".into());
///         Ok(())
///     }
/// }
/// ```
pub trait Defaulter<K: Kind + Serialize>: Send + Sync + 'static {
    /// Sets the defaults of `object` (the new object of a create or an update).
    fn default(
        &self,
        object: &mut K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Result<(), Denial>> + Send;
}

/// A [`Defaulter`] as a registered hook.
pub(crate) struct DefaulterHook<K, D> {
    defaulter: D,
    _kind: PhantomData<fn() -> K>,
}

impl<K, D> DefaulterHook<K, D> {
    pub(crate) fn new(defaulter: D) -> Self {
        Self {
            defaulter,
            _kind: PhantomData,
        }
    }
}

impl<K: Kind + Serialize, D: Defaulter<K>> AdmissionHook for DefaulterHook<K, D> {
    fn review(&self, review: DecodedReview) -> BoxFuture<'_, AdmissionResponse> {
        async move {
            if let Err(message) = check_kind::<K>(&review.request) {
                return response::errored(400, message);
            }
            if matches!(
                review.request.operation,
                Operation::Delete | Operation::Connect
            ) {
                return response::allowed(Warnings::new());
            }
            let Some(raw) = review.object.as_ref() else {
                return response::errored(400, "the admission request has no `object`");
            };
            let mut object = match typed::<K>(Some(raw), "object") {
                Ok(object) => object,
                Err(message) => return response::errored(400, message),
            };
            let before = serde_json::to_value(&object);
            if let Err(denial) = self.defaulter.default(&mut object, &review.request).await {
                return response::denied(denial);
            }
            let (before, after) = match (before, serde_json::to_value(&object)) {
                (Ok(before), Ok(after)) => (before, after),
                (Err(error), _) | (_, Err(error)) => {
                    return response::errored(
                        500,
                        format!("cannot encode the defaulted {}: {error}", K::kind(&())),
                    );
                }
            };
            if before == after {
                return response::allowed(Warnings::new());
            }
            let patch = defaulting_patch(raw, &before, &after);
            if patch.0.is_empty() {
                return response::allowed(Warnings::new());
            }
            match serde_json::to_vec(&patch) {
                Ok(encoded) => {
                    let mut response = response::allowed(Warnings::new());
                    response.patch = Some(encoded);
                    response
                }
                Err(error) => {
                    response::errored(500, format!("cannot encode the JSON patch: {error}"))
                }
            }
        }
        .boxed()
    }
}
