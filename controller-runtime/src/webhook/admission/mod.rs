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
//!   `AdmissionReview` wire format (decoding a request, encoding a response); `hook.rs`:
//!   what every registered handler is to the server.

mod defaulter;
mod hook;
mod patch;
mod raw;
mod response;
pub(crate) mod review;
mod validator;

pub use defaulter::Defaulter;
pub(crate) use defaulter::DefaulterHook;
pub(crate) use hook::AdmissionHook;
pub use kube::core::admission::{AdmissionResponse, AdmissionReview, Operation};
pub(crate) use raw::RawHook;
pub use raw::{AdmissionHandler, FnAdmissionHandler, admission_fn};
pub(crate) use response::errored;
pub use response::{Denial, Validation, Warnings};
pub use review::AdmissionRequest;
pub use validator::Validator;
pub(crate) use validator::ValidatorHook;
