//! Webhook wiring (feature `webhook`): the environment's certificate authority and serving
//! certificate, the webhook server configuration managers get, and the webhook configurations
//! that route the simulator to a running manager's server.

mod certs;

use std::net::{IpAddr, Ipv4Addr};

use controller_runtime::util::create_or_update;
use controller_runtime::webhook::{ClientConfig, WebhookServerConfig};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::Api;
use kube::core::ApiResource;

pub use certs::ServingCerts;

use crate::error::Error;
use crate::running::RunningManager;

/// The label the API server sets on every namespace to its name.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The names the environment's serving certificate is valid for.
pub(crate) fn loopback_names() -> Vec<String> {
    vec!["localhost".to_owned(), Ipv4Addr::LOCALHOST.to_string()]
}

/// A webhook server on a free loopback port presenting `certs`.
pub(crate) fn server_config(certs: &ServingCerts) -> WebhookServerConfig {
    WebhookServerConfig::new()
        .host(IpAddr::V4(Ipv4Addr::LOCALHOST))
        .port(0)
        .cert_dir(certs.dir())
}

impl RunningManager {
    /// How the API server reaches this manager's webhook server, once it listens; fails if the
    /// environment has no webhooks, or the manager stopped or did not listen in time.
    pub async fn webhook_client_config(&self) -> Result<ClientConfig, Error> {
        if self.ca_pem.is_none() {
            return Err(Error::WebhooksNotEnabled);
        }
        // Some(Some(address)) once it listens, Some(None) if the manager stopped first.
        let listening = crate::eventually(
            "the manager's webhook server to listen",
            self.timeout,
            || {
                let addr = self.manager().addresses().webhook;
                let stopped = self.is_finished();
                async move { addr.map(Some).or(stopped.then_some(None)) }
            },
        )
        .await?;
        let addr = listening.ok_or_else(|| Error::ManagerStopped {
            what: "its webhook server to listen".to_owned(),
        })?;
        Ok(ClientConfig::url(format!("https://{addr}")))
    }

    /// The PEM of the CA that signed the webhook server's certificate (a `caBundle`), if the
    /// environment has webhooks.
    pub fn webhook_ca_pem(&self) -> Option<&[u8]> {
        self.ca_pem.as_deref()
    }

    /// Waits for the manager's webhook server to listen, then creates (or updates) the
    /// `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` `name` routing the
    /// simulator to every webhook registered on it. On an existing cluster, shared with other
    /// tests, the configurations are named `<name>-<namespace>` and limited to the scratch
    /// namespace, and deleted when the environment ends; the cluster must reach the webhook
    /// server on this machine's loopback (a local test server). A CRD's conversion webhook is
    /// set on the CRD itself: `controller_runtime::webhook::crd_conversion` with
    /// [`webhook_client_config`](Self::webhook_client_config) and
    /// [`webhook_ca_pem`](Self::webhook_ca_pem).
    pub async fn install_webhooks(&self, name: &str) -> Result<(), Error> {
        let client_config = self.webhook_client_config().await?;
        let (Some(ca), Some(server)) = (self.webhook_ca_pem(), self.manager().webhook_server())
        else {
            return Err(Error::WebhooksNotEnabled);
        };
        let name = match &self.cluster {
            Some(scope) => format!("{name}-{}", scope.namespace),
            None => name.to_owned(),
        };
        let failed = |source| Error::WebhookConfiguration {
            name: name.clone(),
            source,
        };
        let selector = self.cluster.as_ref().map(|scope| LabelSelector {
            match_labels: Some([(NAMESPACE_NAME_LABEL.to_owned(), scope.namespace.clone())].into()),
            ..LabelSelector::default()
        });
        let mut validating = server.validating_webhook_configuration(&name, &client_config, ca);
        let mut mutating = server.mutating_webhook_configuration(&name, &client_config, ca);
        if let (Some(selector), Some(scope)) = (&selector, &self.cluster) {
            for webhook in validating.webhooks.iter_mut().flatten() {
                webhook.namespace_selector = Some(selector.clone());
            }
            for webhook in mutating.webhooks.iter_mut().flatten() {
                webhook.namespace_selector = Some(selector.clone());
            }
            scope.record(
                ApiResource::erase::<ValidatingWebhookConfiguration>(&()),
                &name,
            );
            scope.record(
                ApiResource::erase::<MutatingWebhookConfiguration>(&()),
                &name,
            );
        }
        let api: Api<ValidatingWebhookConfiguration> = Api::all(self.client.clone());
        create_or_update(&api, &name, |current| {
            current.webhooks = validating.webhooks
        })
        .await
        .map_err(failed)?;
        let api: Api<MutatingWebhookConfiguration> = Api::all(self.client.clone());
        create_or_update(&api, &name, |current| current.webhooks = mutating.webhooks)
            .await
            .map_err(failed)?;
        Ok(())
    }
}
