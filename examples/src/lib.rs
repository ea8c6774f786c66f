//! Examples of this workspace's crates.
//!
//! * [`sample`]: the sample-controller, a port of kubernetes/sample-controller on
//!   `controller-runtime` (binary `sample-controller`), with the [`foo`] custom resource.
//! * [`pod_index`]: a reflector writing into an indexer, no informer (example `pod-index`).
//! * [`workqueue_only`]: a rate-limited queue with workers, no Kubernetes (example
//!   `workqueue-only`).
//! * [`configmap_mirror`]: an informer factory and two handlers mirroring ConfigMaps across
//!   namespaces, with a finalizer (example `configmap-mirror`).
//! * [`config_reloader`]: a controller-runtime operator that rolls Deployments out again when a
//!   ConfigMap they reference changes, finding them through a field index (example
//!   `config-reloader`).
//! * [`foo_webhooks`]: an operator with validating, defaulting and conversion webhooks for a
//!   two-version Foo, its certificates made at start (binary `foo-webhooks`).
//!
//! The examples run against the cluster the environment configures, or against an embedded
//! `apiserver-sim` ([`cluster`]) when there is none.

pub mod cluster;
pub mod config_reloader;
pub mod configmap_mirror;
pub mod foo;
pub mod foo_webhooks;
pub mod logging;
pub mod pod_index;
pub mod recorder;
pub mod sample;
pub mod workqueue_only;
