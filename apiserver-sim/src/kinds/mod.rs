//! The registry of served kinds: what the server knows about each resource type.
//!
//! - [`resource_info`]: [`ResourceInfo`](resource_info::ResourceInfo), the description of a
//!   served type (names, scope, subresources, generation rule, schemas), and
//!   [`GroupResource`](resource_info::GroupResource), its identity;
//! - [`builtins`]: the built-in types served from startup;
//! - [`crd`]: CustomResourceDefinitions: validation and defaults of the CRD object, the
//!   type a CRD serves, its Established status;
//! - [`schema`]: structural-schema validation, defaults and pruning of custom resources;
//! - [`printers`]: printer columns, the `Table` columns and cells of each kind;
//! - [`webhook_configuration`]: defaults and validation of the admission webhook
//!   configurations.
//!
//! The store keeps the live registry (built-ins plus established CRDs); the discovery
//! documents that list it are rendered by the HTTP front end (`http/discovery.rs`).

pub(crate) mod builtins;
pub(crate) mod crd;
pub(crate) mod printers;
pub(crate) mod resource_info;
pub(crate) mod schema;
pub(crate) mod webhook_configuration;
