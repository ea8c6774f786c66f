//! Admission webhooks: typed [`Validator`]s and [`Defaulter`]s of one kind, and raw
//! [`AdmissionHandler`]s on kube's admission types for anything else.
//!
//! - `validator.rs`: [`Validator`] (create, update with old and new, delete) and how its answer
//!   becomes a review response; `defaulter.rs`: [`Defaulter`], which mutates the object in
//!   place, and `patch.rs`, the RFC 6902 patch computed from its change.
//! - `raw.rs`: [`AdmissionHandler`] and [`admission_fn`], on kube's
//!   [`AdmissionRequest`](kube::core::admission::AdmissionRequest) and
//!   [`AdmissionResponse`].
//! - `response.rs`: [`Denial`] and [`Warnings`], what typed handlers answer; `review.rs`: the
//!   `AdmissionReview` wire format (decoding a request, encoding a response).

mod defaulter;
mod patch;
mod raw;
mod response;
pub(crate) mod review;
mod validator;

use futures::future::BoxFuture;
use kube::core::DynamicObject;

pub use defaulter::Defaulter;
pub(crate) use defaulter::DefaulterHook;
pub use kube::core::admission::{AdmissionResponse, AdmissionReview, Operation};
pub(crate) use raw::RawHook;
pub use raw::{AdmissionHandler, FnAdmissionHandler, admission_fn};
pub(crate) use response::errored;
pub use response::{Denial, Validation, Warnings};
pub use validator::Validator;
pub(crate) use validator::ValidatorHook;

/// One admission request as the API server sends it (kube's type, with the objects untyped):
/// who asks ([`user_info`](kube::core::admission::AdmissionRequest::user_info)), for what
/// [`operation`](kube::core::admission::AdmissionRequest::operation), on which namespace and
/// name, whether it is a [`dry_run`](kube::core::admission::AdmissionRequest::dry_run) (a
/// webhook with side effects must not make them then). Typed handlers get it beside the typed
/// objects.
pub type AdmissionRequest = kube::core::admission::AdmissionRequest<DynamicObject>;

/// A registered admission handler, whatever its kind: answers one decoded review.
pub(crate) trait AdmissionHook: Send + Sync + 'static {
    /// Answers `review` (its uid is filled in by the caller).
    fn review(&self, review: review::DecodedReview) -> BoxFuture<'_, AdmissionResponse>;
}
