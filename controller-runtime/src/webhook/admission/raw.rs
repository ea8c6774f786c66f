//! [`AdmissionHandler`]: a raw admission handler on kube's request and response types, for
//! anything the typed validator and defaulter do not cover (several kinds, subresources,
//! hand-written patches).

use std::fmt;
use std::future::Future;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use kube::core::admission::AdmissionResponse;

use crate::webhook::admission::hook::AdmissionHook;
use crate::webhook::admission::review::AdmissionRequest;
use crate::webhook::admission::review::DecodedReview;

/// Answers admission requests on kube's types (controller-runtime's `admission.Handler`):
/// build the response from the request (`AdmissionResponse::from(&request)` allows; `.deny(..)`
/// refuses; `.with_patch(..)` mutates). Registered with
/// [`Webhook::raw`](crate::webhook::Webhook::raw) on a path of your choice.
///
/// The server fills in the response's `uid`, a missing status code (200 when allowed, 403 when
/// denied), and encodes the patch as the API server expects (base64), whichever way it was set.
///
/// ```
/// use controller_runtime::webhook::{AdmissionHandler, AdmissionRequest, AdmissionResponse};
///
/// struct OnlyAdmins;
///
/// impl AdmissionHandler for OnlyAdmins {
///     async fn handle(&self, request: AdmissionRequest) -> AdmissionResponse {
///         let admin = request.user_info.groups.iter().flatten().any(|group| group == "admins");
///         let response = AdmissionResponse::from(&request);
///         if admin { response } else { response.deny("only admins may do this") }
///     }
/// }
/// ```
pub trait AdmissionHandler: Send + Sync + 'static {
    /// Answers `request`.
    fn handle(&self, request: AdmissionRequest) -> impl Future<Output = AdmissionResponse> + Send;
}

/// An [`AdmissionHandler`] made from an async closure; built with [`admission_fn`].
pub struct FnAdmissionHandler<F> {
    f: F,
}

/// Wraps `f(request)` as an [`AdmissionHandler`].
pub fn admission_fn<F, Fut>(f: F) -> FnAdmissionHandler<F>
where
    F: Fn(AdmissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send + 'static,
{
    FnAdmissionHandler { f }
}

impl<F> fmt::Debug for FnAdmissionHandler<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnAdmissionHandler")
    }
}

impl<F, Fut> AdmissionHandler for FnAdmissionHandler<F>
where
    F: Fn(AdmissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send + 'static,
{
    fn handle(&self, request: AdmissionRequest) -> impl Future<Output = AdmissionResponse> + Send {
        (self.f)(request)
    }
}

/// An [`AdmissionHandler`] as a registered hook.
pub(crate) struct RawHook<H>(pub(crate) H);

impl<H: AdmissionHandler> AdmissionHook for RawHook<H> {
    fn review(&self, review: DecodedReview) -> BoxFuture<'_, AdmissionResponse> {
        self.0.handle(review.request).boxed()
    }
}
