//! The API machinery every layer speaks (after `k8s.io/apimachinery`): leaf modules that
//! import nothing else of the crate.
//!
//! - [`resource_info`]: what the server knows about a served type
//!   ([`ResourceInfo`](resource_info::ResourceInfo)) and a type's identity
//!   ([`GroupResource`](resource_info::GroupResource)); [`typed`]: the typed check of
//!   built-in objects and a type's top-level field names;
//! - [`meta`]: accessors and server-owned values of object metadata held as JSON;
//!   [`pointer`]: strings and integers read by JSON pointer;
//! - [`status`]: `Status` error bodies ([`status::ApiError`]) and their causes;
//! - [`query`]: query-string parsing of list, watch and write options;
//! - [`selector`]: label and field selectors ([`label_parser`]: the label selector syntax);
//! - [`name_rules`]: the rules of names, label keys and values;
//! - [`go_json`], [`go_base64`], [`go_fmt`]: errors and values worded as Go words and prints
//!   them; [`go_struct`]: internal types as field errors print them.

pub(crate) mod go_base64;
pub(crate) mod go_fmt;
pub(crate) mod go_json;
pub(crate) mod go_struct;
pub(crate) mod label_parser;
pub(crate) mod meta;
pub(crate) mod name_rules;
pub(crate) mod pointer;
pub(crate) mod query;
pub(crate) mod resource_info;
pub(crate) mod selector;
pub(crate) mod status;
pub(crate) mod typed;
