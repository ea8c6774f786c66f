//! Installing what routes requests to the webhook server, in two steps: the CRD before the
//! manager starts (its caches list Foos), then — once the server listens — the
//! `ValidatingWebhookConfiguration`, the `MutatingWebhookConfiguration` and the CRD's
//! `spec.conversion`, all trusting the CA that signed the serving certificate.

use controller_runtime::util::{self, create_or_update};
use controller_runtime::webhook::{ClientConfig, WebhookServer, crd_conversion};
use examples::cluster::{ClusterError, wait_established};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionSpec,
};
use kube::{Api, Client};

use super::crd::crd;
use super::names::{CONFIGURATION_NAME, CRD_NAME};

/// Why installing failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The CRD's versions could not be merged (a bug of the example's types).
    #[error("building the CRD: {0}")]
    Crd(#[from] kube::core::crd::MergeError),
    /// Creating or updating an object failed.
    #[error("writing {what}: {source}")]
    Write {
        /// The object.
        what: &'static str,
        /// The error.
        #[source]
        source: util::Error,
    },
    /// The CRD was not established.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

fn write_error(what: &'static str) -> impl FnOnce(util::Error) -> InstallError {
    move |source| InstallError::Write { what, source }
}

/// Creates the Foo CRD, or brings an existing one's versions up to date (keeping its
/// conversion), and waits until it is established.
pub async fn install_crd(client: &Client) -> Result<(), InstallError> {
    let desired = crd()?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    create_or_update(&crds, CRD_NAME, |current| {
        let conversion = current.spec.conversion.take();
        current.spec = CustomResourceDefinitionSpec {
            conversion,
            ..desired.spec
        };
    })
    .await
    .map_err(write_error("the Foo CRD"))?;
    wait_established(client, CRD_NAME).await?;
    Ok(())
}

/// Points the API server at `server` (reached through `client_config`, trusted with
/// `ca_bundle`): the webhook configurations [`CONFIGURATION_NAME`] of the registered
/// validating and mutating webhooks, and the CRD's conversion (`strategy: Webhook`). Existing
/// objects are updated: each start makes a new CA.
pub async fn install_webhooks(
    client: &Client,
    server: &WebhookServer,
    client_config: &ClientConfig,
    ca_bundle: &[u8],
) -> Result<(), InstallError> {
    let conversion = crd_conversion(client_config, ca_bundle);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    create_or_update(&crds, CRD_NAME, |current| {
        current.spec.conversion = Some(conversion);
    })
    .await
    .map_err(write_error("the Foo CRD's conversion"))?;

    let mutating =
        server.mutating_webhook_configuration(CONFIGURATION_NAME, client_config, ca_bundle);
    let configurations: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    create_or_update(&configurations, CONFIGURATION_NAME, |current| {
        current.webhooks = mutating.webhooks;
    })
    .await
    .map_err(write_error("the MutatingWebhookConfiguration"))?;

    let validating =
        server.validating_webhook_configuration(CONFIGURATION_NAME, client_config, ca_bundle);
    let configurations: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    create_or_update(&configurations, CONFIGURATION_NAME, |current| {
        current.webhooks = validating.webhooks;
    })
    .await
    .map_err(write_error("the ValidatingWebhookConfiguration"))?;
    Ok(())
}
