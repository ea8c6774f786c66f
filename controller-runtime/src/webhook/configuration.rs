//! The API objects that route requests to the registered webhooks: the
//! `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` of a set of webhooks, and
//! a CRD's `spec.conversion` for the conversion webhook — for a Service in the cluster or a URL,
//! with the CA bundle that signed the serving certificate.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, ServiceReference, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::webhook::paths::CONVERT_PATH;
use crate::webhook::registration::Webhook;

/// Where the API server reaches the webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientConfig {
    /// A Service in the cluster (the usual deployment); each webhook's path is appended.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The Service port (the API server's default is 443).
        port: Option<i32>,
    },
    /// A base URL, `https://host:port` (for a server outside the cluster, or a test); each
    /// webhook's path is appended.
    Url(String),
}

/// A Service reference, before it becomes one of the two API types of it.
struct ServiceParts {
    namespace: String,
    name: String,
    port: Option<i32>,
}

impl ClientConfig {
    /// The Service `namespace/name`, on its default port 443.
    pub fn service(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self::Service {
            namespace: namespace.into(),
            name: name.into(),
            port: None,
        }
    }

    /// The base URL `url` (e.g. `https://127.0.0.1:9443`).
    pub fn url(url: impl Into<String>) -> Self {
        Self::Url(url.into())
    }

    /// The Service reference (namespace, name, port) or the URL of `path`.
    fn parts(&self, path: &str) -> (Option<ServiceParts>, Option<String>) {
        match self {
            Self::Service {
                namespace,
                name,
                port,
            } => (
                Some(ServiceParts {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    port: *port,
                }),
                None,
            ),
            Self::Url(base) => (None, Some(format!("{}{path}", base.trim_end_matches('/')))),
        }
    }

    fn admission(&self, path: &str, ca_bundle: &[u8]) -> WebhookClientConfig {
        let (service, url) = self.parts(path);
        WebhookClientConfig {
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: service.map(|service| ServiceReference {
                namespace: service.namespace,
                name: service.name,
                path: Some(path.to_owned()),
                port: service.port,
            }),
            url,
        }
    }
}

/// The `ValidatingWebhookConfiguration` `name` routing to every validating webhook among
/// `webhooks` that has rules (typed validators derive theirs from their kind): `sideEffects:
/// None`, `admissionReviewVersions: ["v1"]`, `matchPolicy: Equivalent`, each webhook's failure
/// policy (default `Fail`). `ca_bundle` is the PEM of the CA that signed the serving
/// certificate.
pub fn validating_webhook_configuration(
    name: &str,
    webhooks: &[Webhook],
    client: &ClientConfig,
    ca_bundle: &[u8],
) -> ValidatingWebhookConfiguration {
    let webhooks = webhooks
        .iter()
        .filter(|webhook| !webhook.mutating)
        .filter_map(|webhook| {
            Some(ValidatingWebhook {
                admission_review_versions: vec!["v1".to_owned()],
                client_config: client.admission(&webhook.path, ca_bundle),
                failure_policy: Some(webhook.failure_policy.as_str().to_owned()),
                match_policy: Some("Equivalent".to_owned()),
                name: webhook.name(),
                rules: Some(webhook.effective_rules()?),
                side_effects: "None".to_owned(),
                ..ValidatingWebhook::default()
            })
        })
        .collect();
    ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        webhooks: Some(webhooks),
    }
}

/// The `MutatingWebhookConfiguration` `name` routing to every mutating webhook among
/// `webhooks` that has rules (typed defaulters derive theirs from their kind), with the same
/// defaults as [`validating_webhook_configuration`] and `reinvocationPolicy: Never`.
pub fn mutating_webhook_configuration(
    name: &str,
    webhooks: &[Webhook],
    client: &ClientConfig,
    ca_bundle: &[u8],
) -> MutatingWebhookConfiguration {
    let webhooks = webhooks
        .iter()
        .filter(|webhook| webhook.mutating)
        .filter_map(|webhook| {
            Some(MutatingWebhook {
                admission_review_versions: vec!["v1".to_owned()],
                client_config: client.admission(&webhook.path, ca_bundle),
                failure_policy: Some(webhook.failure_policy.as_str().to_owned()),
                match_policy: Some("Equivalent".to_owned()),
                name: webhook.name(),
                reinvocation_policy: Some("Never".to_owned()),
                rules: Some(webhook.effective_rules()?),
                side_effects: "None".to_owned(),
                ..MutatingWebhook::default()
            })
        })
        .collect();
    MutatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        webhooks: Some(webhooks),
    }
}

/// A CRD's `spec.conversion` sending conversions to the server's `/convert`: `strategy:
/// Webhook`, `conversionReviewVersions: ["v1"]`.
pub fn crd_conversion(
    client: &ClientConfig,
    ca_bundle: &[u8],
) -> apiextensions::CustomResourceConversion {
    let (service, url) = client.parts(CONVERT_PATH);
    apiextensions::CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(apiextensions::WebhookConversion {
            client_config: Some(apiextensions::WebhookClientConfig {
                ca_bundle: Some(ByteString(ca_bundle.to_vec())),
                service: service.map(|service| apiextensions::ServiceReference {
                    namespace: service.namespace,
                    name: service.name,
                    path: Some(CONVERT_PATH.to_owned()),
                    port: service.port,
                }),
                url,
            }),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    }
}
