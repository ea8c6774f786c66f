//! What the examples share that is not the point of any of them: where they run
//! ([`cluster`]: the configured cluster, or an embedded `apiserver-sim`), their logging
//! ([`logging`]), and the nginx Deployment both example operators keep ([`deployment`]).
//!
//! The examples themselves are readable on their own, each in its own file or folder:
//!
//! * `src/bin/sample-controller/`: a port of kubernetes/sample-controller on
//!   `controller-runtime` (Foo → Deployment).
//! * `src/bin/foo-webhooks/`: an operator with validating, defaulting and conversion webhooks
//!   for a two-version Foo, its certificates made at start.
//! * `examples/pod-index.rs`: a reflector writing into an indexer, no informer.
//! * `examples/workqueue-only.rs`: a rate-limited queue with workers, no Kubernetes.
//! * `examples/configmap-mirror.rs`: an informer factory and two handlers mirroring ConfigMaps
//!   across namespaces, with a finalizer.
//! * `examples/config-reloader.rs`: a controller-runtime operator that rolls Deployments out
//!   again when a ConfigMap they reference changes, finding them through a field index.

pub mod cluster;
pub mod deployment;
pub mod logging;
