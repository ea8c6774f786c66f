//! `foo-webhooks`: an operator with admission and conversion webhooks, on controller-runtime's
//! webhook server, for a two-version Foo (`webhooks.kube-rt.dev`).
//!
//! - Versions: [`v1alpha1`] (`spec.deploymentName`, `spec.replicas`, shaped like the
//!   sample-controller's Foo) and [`v1`] (`spec.deployment.name`, `spec.deployment.replicas`),
//!   both served; `v1` is stored and is the hub: `v1alpha1` converts to and from it
//!   ([`Convertible`](controller_runtime::webhook::Convertible)), and the API server calls the
//!   conversion webhook (`/convert`) whenever a Foo is read or written as `v1alpha1`.
//! - Admission, on `v1` (`matchPolicy: Equivalent` sends `v1alpha1` requests converted):
//!   [`FooValidator`] refuses a Foo without a valid Deployment name or with replicas outside
//!   1..=10, and a renamed Deployment; [`FooDefaulter`] sets absent replicas to 1.
//! - Reconcile: [`FooReconciler`] keeps each Foo's Deployment and its status.
//! - Start ([`start`]): a CA and a serving certificate (the test environment's
//!   `ServingCerts`), the manager and its
//!   webhook server, the CRD; once the server listens, the `ValidatingWebhookConfiguration`,
//!   the `MutatingWebhookConfiguration` and the CRD's `spec.conversion`, reaching the server by
//!   URL or through a Service ([`Settings`]) and trusting the CA.
//!
//! Files: `v1.rs`, `v1alpha1.rs` (the versions and the conversion), `crd.rs`, `admission.rs`,
//! `reconcile.rs`, `register.rs` (what the manager runs), `install.rs` (what is
//! written to the API server), `operator.rs` ([`start`], [`Running`]), `names.rs`.

mod admission;
mod crd;
mod install;
mod names;
mod operator;
mod reconcile;
mod register;
pub mod v1;
pub mod v1alpha1;

pub use admission::{DEFAULT_REPLICAS, FooDefaulter, FooValidator, MAX_REPLICAS, check_deployment};
pub use crd::crd;
pub use install::{InstallError, install_crd, install_webhooks};
pub use names::{
    CONFIGURATION_NAME, CONTROLLER_NAME, CRD_NAME, GROUP, MUTATING_WEBHOOK, STORAGE_VERSION,
    VALIDATING_WEBHOOK,
};
pub use operator::{
    OperatorError, Running, Settings, WEBHOOK_SERVER_START_TIMEOUT, WebhookService, start,
};
pub use reconcile::FooReconciler;
pub use register::register;

#[cfg(test)]
mod tests;
