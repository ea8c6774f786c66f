//! The registry of served kinds: what the server knows about each resource type (each
//! described by a `ResourceInfo` of `machinery/resource_info.rs`).
//!
//! - [`builtin_types`]: every built-in kind as its k8s-openapi type describes it;
//! - [`builtin_schemas`]: their types' OpenAPI v3 schema definitions (with the `explain`
//!   feature);
//! - [`builtin_traits`]: what the types do not carry (short names, categories, verbs,
//!   scale, generation exceptions, DELETE answers);
//! - [`builtins`]: the built-in types served from startup, assembled from the two above;
//! - [`event_conversion`], [`hpa_conversion`]: events.k8s.io events as core events, and
//!   autoscaling/v1 horizontal pod autoscalers as autoscaling/v2 ones;
//! - [`crd`]: CustomResourceDefinitions: validation and defaults of the CRD object, the
//!   type a CRD serves, its Established status;
//! - [`schema`]: structural-schema validation, defaults and pruning of custom resources;
//! - [`patch_strategies`]: how the fields of built-in kinds merge in a strategic merge patch
//!   (patch strategies and merge keys, from upstream's OpenAPI documents);
//! - [`printers`]: printer columns, the `Table` columns and cells of each kind;
//! - [`webhook_configuration`]: defaults and validation of the admission webhook
//!   configurations.
//!
//! The store keeps the live registry (built-ins plus established CRDs); the discovery
//! documents that list it are rendered by the HTTP front end (`http/discovery.rs`).

/// The Kubernetes minor version the server reports (`/version`, OpenAPI documents, the
/// simulated node's kubelet); one minor from kubectl 1.32, so no skew warning.
pub(crate) const KUBE_MINOR: &str = "33";

pub(crate) mod builtin_schemas;
pub(crate) mod builtin_traits;
pub(crate) mod builtin_types;
pub(crate) mod builtins;
pub(crate) mod crd;
pub(crate) mod defaults;
pub(crate) mod event_conversion;
pub(crate) mod hpa_conversion;
pub(crate) mod patch_strategies;
pub(crate) mod printers;
pub(crate) mod schema;
pub(crate) mod webhook_configuration;
