//! Admission and conversion webhooks, as controller-runtime serves them: typed
//! [`Validator`]s and [`Defaulter`]s of one kind (the server computes a defaulter's JSON patch),
//! raw [`AdmissionHandler`]s on kube's admission types, and hub-and-spoke
//! [`Conversion`]s of a CRD's versions — on one HTTPS [`WebhookServer`] whose certificate is
//! re-read from its directory without a restart.
//!
//! ```no_run
//! use controller_runtime::webhook::{
//!     AdmissionRequest, Denial, Validation, Validator, Warnings, Webhook, WebhookServerConfig,
//! };
//! use controller_runtime::manager::Manager;
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! struct SmallConfigMaps;
//!
//! impl Validator<ConfigMap> for SmallConfigMaps {
//!     async fn validate_create(&self, config: &ConfigMap, _: &AdmissionRequest) -> Validation {
//!         let keys = config.data.as_ref().map_or(0, |data| data.len());
//!         if keys > 100 {
//!             return Err(Denial::new(format!("{keys} keys; at most 100 are allowed")));
//!         }
//!         Ok(Warnings::new())
//!     }
//! }
//!
//! # async fn run(client: kube::Client) -> Result<(), controller_runtime::manager::Error> {
//! let manager = Manager::builder(client)
//!     .webhook_server(WebhookServerConfig::new().cert_dir("/tmp/k8s-webhook-server/serving-certs"))
//!     .build();
//! // Served on /validate--v1-configmap.
//! manager.add_webhook(Webhook::validator::<ConfigMap>(SmallConfigMaps))?;
//! manager.start().await
//! # }
//! ```
//!
//! # Behaviour
//!
//! - Paths: `/validate-<group>-<version>-<kind>` and `/mutate-…` (the group's dots as dashes,
//!   the kind lowercase; [`validate_path`], [`mutate_path`]), `/convert` for every conversion,
//!   or a custom path.
//! - A review whose body is not JSON, not an `admission.k8s.io/v1` `AdmissionReview` (or
//!   `apiextensions.k8s.io/v1` `ConversionReview`), empty, or larger than the limit (7 MiB by
//!   default) is answered `400 Bad Request` with a review saying why; a method other than
//!   `POST`, `405`; an unknown path, `404`.
//! - A handler that panics or overruns its timeout (10 s by default) is answered with an error
//!   (code 500 in the review's status, HTTP 200); the server keeps serving. Conversions run on
//!   the blocking pool for the same reason.
//! - Metrics: `controller_runtime_webhook_requests_total{webhook,code}`,
//!   `controller_runtime_webhook_latency_seconds{webhook}`,
//!   `controller_runtime_webhook_requests_in_flight{webhook}` (the label is the path, the code
//!   the HTTP status), and the panic counters.
//! - The configuration objects: [`validating_webhook_configuration`],
//!   [`mutating_webhook_configuration`] and [`crd_conversion`] for a Service or a URL and the
//!   CA bundle.
//!
//! # Layout
//!
//! - `admission/`: [`Validator`], [`Defaulter`] (and its patch), [`AdmissionHandler`], the
//!   `AdmissionReview` wire format.
//! - `conversion/`: [`Convertible`], [`Conversion`] and the `ConversionReview` answer.
//! - `server/`: [`WebhookServer`], its accept loop, request handling, TLS and metrics.
//! - `config.rs` ([`WebhookServerConfig`]), `registration.rs` ([`Webhook`]), `paths.rs`,
//!   `configuration.rs` (the API objects), `contain.rs` (panics and timeouts), `error.rs`
//!   ([`Error`]). The manager runs the server and registers webhooks on it
//!   ([`ManagerBuilder::webhook_server`](crate::manager::ManagerBuilder::webhook_server),
//!   [`Manager::add_webhook`](crate::manager::Manager::add_webhook),
//!   [`Manager::add_conversion`](crate::manager::Manager::add_conversion)).
//!
//! # Errors
//!
//! [`Error`]: a registration (a path taken or invalid, an inconsistent conversion) or the
//! server's start (its certificate, its address) went wrong. Problems of one review are never
//! errors of the server: they are answered in the review.

pub mod admission;
mod config;
mod configuration;
mod contain;
pub mod conversion;
mod error;
/// Review bodies for the fuzz targets; compiled only with the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod paths;
mod registration;
mod server;

pub use admission::{
    AdmissionHandler, AdmissionRequest, AdmissionResponse, AdmissionReview, Defaulter, Denial,
    FnAdmissionHandler, Operation, Validation, Validator, Warnings, admission_fn,
};
pub use config::{
    DEFAULT_CERT_NAME, DEFAULT_CERT_RELOAD_INTERVAL, DEFAULT_HANDLER_TIMEOUT, DEFAULT_KEY_NAME,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_WEBHOOK_PORT, WebhookServerConfig,
};
pub use configuration::{
    ClientConfig, crd_conversion, mutating_webhook_configuration, validating_webhook_configuration,
};
pub use conversion::{Conversion, ConversionError, Convertible, KindConversion};
pub use error::Error;
pub use paths::{CONVERT_PATH, mutate_path, validate_path};
pub use registration::{FailurePolicy, Webhook};
pub use server::WebhookServer;
