//! Wire formats: what goes over HTTP and how it is parsed, checked and rendered.
//!
//! - [`meta`]: accessors and server-owned values of object metadata held as JSON;
//! - [`query`]: query-string parsing of list, watch and write options;
//! - [`selector`]: label and field selectors ([`label_parser`]: the label selector syntax);
//! - [`go_json`], [`go_base64`], [`go_fmt`]: errors and values worded as Go words and prints
//!   them;
//! - [`status`]: `Status` error bodies ([`status::ApiError`]);
//! - [`accept`]: content negotiation of responses (`Accept` to a representation and an
//!   encoding, or 406);
//! - [`format`]: the response encoding (JSON or protobuf);
//! - [`repr`]: response representations (the full object, `PartialObjectMetadata`, `Table`);
//!   [`list_items`]: items of built-in kinds' lists without their type meta;
//! - [`table`]: `meta.k8s.io` `Table` responses (`kubectl get`) and `includeObject`;
//! - [`protobuf`]: `application/vnd.kubernetes.protobuf` of every built-in kind (bodies,
//!   objects, lists, watch frames, `Status`);
//! - [`patch`]: JSON patch, merge patch and strategic merge patch ([`strategic_merge`]);
//! - [`apply`]: server-side apply and field ownership (`managedFields`);
//! - [`yaml11`]: YAML request bodies to JSON, read as upstream reads them (YAML 1.1).

pub(crate) mod accept;
pub(crate) mod apply;
pub(crate) mod format;
pub(crate) mod go_base64;
pub(crate) mod go_fmt;
pub(crate) mod go_json;
pub(crate) mod label_parser;
pub(crate) mod list_items;
pub(crate) mod meta;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod query;
pub(crate) mod repr;
pub(crate) mod selector;
pub(crate) mod status;
pub(crate) mod strategic_merge;
pub(crate) mod table;
pub(crate) mod yaml11;
