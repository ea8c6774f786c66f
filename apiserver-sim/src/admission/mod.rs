//! Admission and conversion webhooks, called like a real API server calls them.
//!
//! - [`hooks`]: the webhooks of the stored `ValidatingWebhookConfiguration`s and
//!   `MutatingWebhookConfiguration`s, parsed, in call order, cached until one changes;
//! - [`matching`]: a request's admission attributes and which webhooks it calls (rules,
//!   `matchPolicy`, `namespaceSelector`, `objectSelector`);
//! - [`review`]: the `AdmissionReview` request, the checks of a response, denials and
//!   `Warning` headers;
//! - [`dispatch`]: mutating webhooks in order with reinvocation, validating webhooks at once,
//!   `failurePolicy`, `sideEffects` on dry runs;
//! - [`conversion`]: custom resources between versions, through the CRD's conversion
//!   webhook (`ConversionReview`) or by `apiVersion` alone;
//! - [`watch_conversion`]: a watch stream's objects converted on the way out;
//! - [`endpoints`]: where webhook services are (the simulator has no cluster network);
//! - [`client`]: the HTTPS client (rustls, roots from `caBundle`, timeouts in Tokio time).
//!
//! The write verbs call this (`http/admitted.rs`) before an object is committed: mutating
//! webhooks on the decoded and defaulted object, then the write's own validation (as a dry
//! run), then validating webhooks on the final object, then the commit.

pub(crate) mod client;
pub(crate) mod conversion;
pub(crate) mod dispatch;
pub(crate) mod endpoints;
pub(crate) mod hooks;
pub(crate) mod matching;
pub(crate) mod review;
pub(crate) mod watch_conversion;
