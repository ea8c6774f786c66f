//! The names the operator writes and is known by: API group, versions, CRD, configurations,
//! webhooks, controller.

/// The API group of Foo.
pub const GROUP: &str = "webhooks.kube-rt.dev";
/// The stored version, and the hub of the conversions.
pub const STORAGE_VERSION: &str = "v1";
/// The CRD's name.
pub const CRD_NAME: &str = "foos.webhooks.kube-rt.dev";
/// The controller's name, and the field manager of its writes.
pub const CONTROLLER_NAME: &str = "foo-webhooks";
/// Name of the `ValidatingWebhookConfiguration` and of the `MutatingWebhookConfiguration`.
pub const CONFIGURATION_NAME: &str = "foo-webhooks";
/// The validating webhook's name (in the configuration, and in the API server's denials:
/// `admission webhook "vfoo.webhooks.kube-rt.dev" denied the request: …`).
pub const VALIDATING_WEBHOOK: &str = "vfoo.webhooks.kube-rt.dev";
/// The defaulting webhook's name.
pub const MUTATING_WEBHOOK: &str = "mfoo.webhooks.kube-rt.dev";
