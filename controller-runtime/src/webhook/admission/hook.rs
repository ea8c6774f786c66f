//! The one interface the server calls for every admission handler, whatever its kind
//! (validator, defaulter, raw).

use futures::future::BoxFuture;
use kube::core::admission::AdmissionResponse;

use crate::webhook::admission::review::DecodedReview;

/// A registered admission handler, whatever its kind: answers one decoded review.
pub(crate) trait AdmissionHook: Send + Sync + 'static {
    /// Answers `review` (its uid is filled in by the caller).
    fn review(&self, review: DecodedReview) -> BoxFuture<'_, AdmissionResponse>;
}
