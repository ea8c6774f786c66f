//! Wire formats: what goes over HTTP and how it is parsed, checked and rendered.
//!
//! - [`meta`]: accessors and server-owned values of object metadata held as JSON;
//! - [`query`]: query-string parsing of list, watch and write options;
//! - [`selector`]: label and field selectors;
//! - [`status`]: `Status` error bodies ([`status::ApiError`]);
//! - [`repr`]: response representations (the full object, or `PartialObjectMetadata`);
//! - [`format`]: the response encoding negotiated from `Accept` (JSON or protobuf);
//! - [`protobuf`]: `application/vnd.kubernetes.protobuf` of every built-in kind (bodies,
//!   objects, lists, watch frames, `Status`);
//! - [`patch`]: JSON patch, merge patch, strategic merge patch and the simplified apply.

pub(crate) mod format;
pub(crate) mod meta;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod query;
pub(crate) mod repr;
pub(crate) mod selector;
pub(crate) mod status;
