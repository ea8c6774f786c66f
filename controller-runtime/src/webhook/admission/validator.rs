//! [`Validator`]: typed validation of one kind on create, update and delete, and the hook that
//! decodes a review's objects for it and turns its answer into a response.

use std::future::Future;
use std::marker::PhantomData;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::Value;

use crate::kind::Kind;
use crate::webhook::admission::hook::AdmissionHook;
use crate::webhook::admission::response;
use crate::webhook::admission::response::{Validation, Warnings};
use crate::webhook::admission::review::AdmissionRequest;
use crate::webhook::admission::review::DecodedReview;

/// Validates objects of kind `K` (controller-runtime's `CustomValidator`): allow, allow with
/// warnings, or deny with a reason and a status code. Registered with
/// [`Webhook::validator`](crate::webhook::Webhook::validator), served on
/// `/validate-<group>-<version>-<kind>`.
///
/// Every method has a default that allows, so implement only the operations you check. Which
/// operations the API server sends is decided by the webhook configuration: by default
/// `CREATE` and `UPDATE` (kubebuilder's default); `DELETE` only when asked with
/// [`Webhook::operations`](crate::webhook::Webhook::operations). `CONNECT` requests are always
/// allowed.
///
/// The methods are native async trait methods, like [`Reconciler`](crate::controller::Reconciler)'s:
///
/// ```
/// use controller_runtime::webhook::{AdmissionRequest, Denial, Validation, Validator, Warnings};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct NoEmptyConfigMaps;
///
/// impl Validator<ConfigMap> for NoEmptyConfigMaps {
///     async fn validate_create(&self, config: &ConfigMap, _request: &AdmissionRequest) -> Validation {
///         match &config.data {
///             Some(data) if !data.is_empty() => Ok(Warnings::new()),
///             _ => Err(Denial::new("a ConfigMap needs data").with_code(422).with_reason("Invalid")),
///         }
///     }
/// }
/// ```
///
/// The request (user, namespace, `dry_run`, ...) comes beside the objects. A handler that
/// panics or takes longer than the server's handler timeout is answered with an error (code
/// 500) and the server keeps serving.
pub trait Validator<K: Kind>: Send + Sync + 'static {
    /// Validates `object` about to be created.
    fn validate_create(
        &self,
        object: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Validation> + Send {
        let _ = (object, request);
        async { Ok(Warnings::new()) }
    }

    /// Validates the change from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Validation> + Send {
        let _ = (old, new, request);
        async { Ok(Warnings::new()) }
    }

    /// Validates the deletion of `object` (its last state, from the request's `oldObject`).
    fn validate_delete(
        &self,
        object: &K,
        request: &AdmissionRequest,
    ) -> impl Future<Output = Validation> + Send {
        let _ = (object, request);
        async { Ok(Warnings::new()) }
    }
}

/// A [`Validator`] as a registered hook.
pub(crate) struct ValidatorHook<K, V> {
    validator: V,
    _kind: PhantomData<fn() -> K>,
}

impl<K, V> ValidatorHook<K, V> {
    pub(crate) fn new(validator: V) -> Self {
        Self {
            validator,
            _kind: PhantomData,
        }
    }
}

impl<K: Kind, V: Validator<K>> AdmissionHook for ValidatorHook<K, V> {
    fn review(&self, review: DecodedReview) -> BoxFuture<'_, AdmissionResponse> {
        async move {
            if let Err(message) = check_kind::<K>(&review.request) {
                return response::errored(400, message);
            }
            let request = &review.request;
            let validation = match request.operation {
                Operation::Connect => return response::allowed(Warnings::new()),
                Operation::Create => match typed::<K>(review.object.as_ref(), "object") {
                    Ok(object) => self.validator.validate_create(&object, request).await,
                    Err(message) => return response::errored(400, message),
                },
                Operation::Update => {
                    let new = typed::<K>(review.object.as_ref(), "object");
                    let old = typed::<K>(review.old_object.as_ref(), "oldObject");
                    match (old, new) {
                        (Ok(old), Ok(new)) => {
                            self.validator.validate_update(&old, &new, request).await
                        }
                        (Err(message), _) | (_, Err(message)) => {
                            return response::errored(400, message);
                        }
                    }
                }
                Operation::Delete => match typed::<K>(review.old_object.as_ref(), "oldObject") {
                    Ok(object) => self.validator.validate_delete(&object, request).await,
                    Err(message) => return response::errored(400, message),
                },
            };
            match validation {
                Ok(warnings) => response::allowed(warnings),
                Err(denial) => response::denied(denial),
            }
        }
        .boxed()
    }
}

/// Refuses (400) a review of another kind than `K`: the configuration routes the wrong kind
/// here.
pub(crate) fn check_kind<K: Kind>(request: &AdmissionRequest) -> Result<(), String> {
    let kind = &request.kind;
    if kind.group == K::group(&()) && kind.version == K::version(&()) && kind.kind == K::kind(&()) {
        return Ok(());
    }
    Err(format!(
        "this webhook serves {}, not {}; check the webhook configuration's rules",
        gvk_text(&K::group(&()), &K::version(&()), &K::kind(&())),
        gvk_text(&kind.group, &kind.version, &kind.kind),
    ))
}

fn gvk_text(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("{version}/{kind}")
    } else {
        format!("{group}/{version}/{kind}")
    }
}

/// `field` of the request decoded as a `K`, or why not (answered with 400).
pub(crate) fn typed<K: Kind>(value: Option<&Value>, field: &str) -> Result<K, String> {
    let Some(value) = value else {
        return Err(format!("the admission request has no `{field}`"));
    };
    K::deserialize(value).map_err(|error| {
        format!(
            "cannot decode the request's `{field}` as {}: {error}",
            K::kind(&())
        )
    })
}
