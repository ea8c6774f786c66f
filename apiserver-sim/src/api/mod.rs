//! The request and response formats of the API: how a request's path, body and patch are
//! read, and how answers are encoded and rendered. Uses the served kinds (`kinds/`) and the
//! machinery below them, never the layers that handle requests.
//!
//! - [`route`]: the request path parsed (group, version, resource, namespace, name,
//!   subresource), as upstream's `RequestInfo`;
//! - [`accept`]: content negotiation of responses (`Accept` to a representation and an
//!   encoding, or 406);
//! - [`format`]: the response encodings (JSON or protobuf) and their media types;
//! - [`repr`]: response representations (the full object, `PartialObjectMetadata`, `Table`);
//!   [`list_items`]: items of built-in kinds' lists without their type meta;
//! - [`table`]: `meta.k8s.io` `Table` responses (`kubectl get`) and `includeObject`;
//! - [`watch_line`]: the watch wire format (event lines, ERROR lines, the initial-events-end
//!   annotation);
//! - [`protobuf`]: `application/vnd.kubernetes.protobuf` of every built-in kind (bodies,
//!   objects, lists, watch frames, `Status`);
//! - [`patch`]: JSON patch, merge patch and strategic merge patch ([`strategic_merge`]);
//! - [`apply`]: server-side apply and field ownership (`managedFields`);
//! - [`yaml11`]: YAML request bodies to JSON, read as upstream reads them (YAML 1.1).

pub(crate) mod accept;
pub(crate) mod apply;
pub(crate) mod format;
pub(crate) mod list_items;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod repr;
pub(crate) mod route;
pub(crate) mod strategic_merge;
pub(crate) mod table;
pub(crate) mod watch_line;
pub(crate) mod yaml11;
