//! `foo-webhooks`: an operator with validating, defaulting and conversion webhooks for a
//! two-version Foo (`webhooks.kube-rt.dev` `v1alpha1` and `v1`), served by controller-runtime's
//! webhook server with a certificate made at start.
//!
//! Runs against the cluster that `--kubeconfig`, KUBECONFIG, `~/.kube/config` or the in-cluster
//! environment names; with none (or with `--embedded`) it starts an embedded `apiserver-sim`,
//! creates `example-foo` as `v1alpha1` without replicas (the defaulting webhook sets them) and
//! writes a kubeconfig for `kubectl`.
//!
//! The API server reaches the webhooks at `https://<host>:<port>` by default; `--service
//! NAMESPACE/NAME` configures them through that Service instead (in a cluster, the Service in
//! front of this process; with apiserver-sim, a service mapped with `--service-endpoint`).
//!
//! - Versions: [`v1alpha1`] (`spec.deploymentName`, `spec.replicas`, shaped like the
//!   sample-controller's Foo) and [`v1`] (`spec.deployment.name`, `spec.deployment.replicas`),
//!   both served; `v1` is stored and is the hub: `v1alpha1` converts to and from it
//!   ([`Convertible`](controller_runtime::webhook::Convertible)), and the API server calls the
//!   conversion webhook (`/convert`) whenever a Foo is read or written as `v1alpha1`.
//! - Admission ([`admission`]), on `v1` (`matchPolicy: Equivalent` sends `v1alpha1` requests
//!   converted): a validator refuses a Foo without a valid Deployment name or with replicas
//!   outside 1..=10, and a renamed Deployment; a defaulter sets absent replicas to 1.
//! - Reconcile ([`reconcile`]): keeps each Foo's Deployment and its status.
//! - Start ([`operator`]): a CA and a serving certificate (the test environment's
//!   `ServingCerts`), the manager with its webhook server, the webhooks, the conversion and the
//!   controller registered on it, the CRD; once the server listens, the
//!   `ValidatingWebhookConfiguration`, the `MutatingWebhookConfiguration` and the CRD's
//!   `spec.conversion` ([`install`]), reaching the server by URL or through a Service and
//!   trusting the CA.

pub mod admission;
pub mod crd;
pub mod install;
pub mod names;
pub mod operator;
pub mod reconcile;
pub mod v1;
pub mod v1alpha1;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use controller_runtime::util::with_user_agent;
use controller_runtime::webhook::DEFAULT_WEBHOOK_PORT;
use examples::cluster::{ClusterError, Embedded, cluster_config};
use kube::api::PostParams;
use kube::{Api, Client};

use names::GROUP;
use operator::{OperatorError, Settings, WebhookService};

/// Validates, defaults and converts Foos (webhooks.kube-rt.dev), and keeps their Deployments.
#[derive(Debug, Parser)]
#[command(name = "foo-webhooks", version)]
struct Cli {
    /// Start an embedded apiserver-sim even if a cluster is configured.
    #[arg(long, conflicts_with = "kubeconfig")]
    embedded: bool,
    /// Use the cluster of this kubeconfig file.
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    /// The address the webhook server listens on.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    webhook_host: IpAddr,
    /// The webhook server's port (default: 9443 against a cluster, a free port on the embedded
    /// server; 0 picks a free port).
    #[arg(long, value_name = "PORT")]
    webhook_port: Option<u16>,
    /// Configure the webhooks with this Service (NAMESPACE/NAME, port 443) instead of the
    /// server's URL; the certificate is made for `NAME.NAMESPACE.svc`.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    service: Option<WebhookService>,
}

/// Why the operator stopped with an error.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Operator(#[from] OperatorError),
    #[error("creating example-foo: {0}")]
    ExampleFoo(#[source] kube::Error),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    examples::logging::init();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "foo-webhooks failed");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), RunError> {
    let config = if cli.embedded {
        None
    } else {
        cluster_config(cli.kubeconfig.as_deref()).await?
    };
    let mut settings = Settings {
        host: cli.webhook_host,
        port: cli.webhook_port.unwrap_or(DEFAULT_WEBHOOK_PORT),
        service: cli.service,
    };
    match config {
        Some(config) => {
            println!("foo-webhooks: using the cluster at {}", config.cluster_url);
            let config = with_user_agent(config, "foo-webhooks", env!("CARGO_PKG_VERSION"));
            let client = Client::try_from(config).map_err(ClusterError::from)?;
            let running = operator::start(client, settings).await?;
            println!(
                "foo-webhooks: webhooks served on https://{}",
                running.webhook_addr()
            );
            Ok(running.wait().await?)
        }
        None => {
            println!("foo-webhooks: no cluster configured, using an embedded apiserver-sim");
            settings.port = cli.webhook_port.unwrap_or(0);
            let embedded = Embedded::start().await?;
            let result = run_embedded(&embedded, settings).await;
            embedded.shutdown().await;
            result
        }
    }
}

/// Starts the operator on the embedded server, creates `example-foo` as `v1alpha1` without
/// replicas and prints what the defaulting webhook made of it.
async fn run_embedded(embedded: &Embedded, settings: Settings) -> Result<(), RunError> {
    let client = embedded.client()?;
    let running = operator::start(client.clone(), settings).await?;
    println!(
        "foo-webhooks: webhooks served on https://{}",
        running.webhook_addr()
    );
    let foos: Api<v1alpha1::Foo> = Api::namespaced(client, "default");
    let created = foos
        .create(
            &PostParams::default(),
            &v1alpha1::new_foo("example-foo", "example-foo", None),
        )
        .await;
    let created = match created {
        Ok(created) => created,
        Err(error) => {
            let _stopped = running.stop().await;
            return Err(RunError::ExampleFoo(error));
        }
    };
    println!(
        "foo-webhooks: created example-foo as {}/v1alpha1 without replicas; defaulted to spec.replicas={}",
        GROUP,
        created.spec.replicas.unwrap_or_default()
    );
    let path = embedded.kubeconfig().display();
    println!("foo-webhooks: kubeconfig written to {path}");
    println!(
        "foo-webhooks: try `KUBECONFIG={path} kubectl get foos.v1alpha1.{group} -o yaml` (and .v1.)",
        group = GROUP
    );
    Ok(running.wait().await?)
}
