//! `sample-controller`: keeps a Deployment for every `Foo`, like kubernetes/sample-controller.
//!
//! Runs against the cluster that `--kubeconfig`, KUBECONFIG, `~/.kube/config` or the in-cluster
//! environment names; with none (or with `--embedded`) it starts an embedded `apiserver-sim`,
//! installs the Foo CRD, creates `example-foo` and writes a kubeconfig for `kubectl`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use controller_runtime::Manager;
use examples::cluster::{ClusterError, Embedded, cluster_config, install_crd};
use examples::foo::{Foo, crd, crd_yaml, new_foo};
use examples::sample::{self, RESYNC_PERIOD, SetupError};
use kube::api::PostParams;
use kube::{Api, Client};

/// Keeps a Deployment for every Foo (samplecontroller.k8s.io/v1alpha1).
#[derive(Debug, Parser)]
#[command(name = "sample-controller", version)]
struct Cli {
    /// Start an embedded apiserver-sim even if a cluster is configured.
    #[arg(long, conflicts_with = "kubeconfig")]
    embedded: bool,
    /// Use the cluster of this kubeconfig file.
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    /// Watch Foos and Deployments in this namespace only (default: all namespaces).
    #[arg(long, value_name = "NAMESPACE")]
    namespace: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the Foo CustomResourceDefinition as YAML (for `kubectl apply -f -`).
    Crd,
}

/// Why the controller stopped with an error.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("creating example-foo: {0}")]
    ExampleFoo(#[source] kube::Error),
    #[error("manager: {0}")]
    Manager(#[from] controller_runtime::Error),
    #[error("printing the CRD: {0}")]
    Yaml(#[from] serde_yaml::Error),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    examples::logging::init();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "sample-controller failed");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), RunError> {
    if let Some(Command::Crd) = cli.command {
        print!("{}", crd_yaml()?);
        return Ok(());
    }
    let config = if cli.embedded {
        None
    } else {
        cluster_config(cli.kubeconfig.as_deref()).await?
    };
    match config {
        Some(config) => {
            println!(
                "sample-controller: using the cluster at {}",
                config.cluster_url
            );
            let client = Client::try_from(config).map_err(ClusterError::from)?;
            run_controller(client, cli.namespace).await
        }
        None => {
            println!("sample-controller: no cluster configured, using an embedded apiserver-sim");
            let embedded = Embedded::start().await?;
            let result = run_embedded(&embedded, cli.namespace).await;
            embedded.shutdown().await;
            result
        }
    }
}

/// Installs the CRD and `example-foo` in the embedded server, then runs the controller.
async fn run_embedded(embedded: &Embedded, namespace: Option<String>) -> Result<(), RunError> {
    let client = embedded.client()?;
    install_crd(&client, &crd()).await?;
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    foos.create(
        &PostParams::default(),
        &new_foo("example-foo", "example-foo", Some(1)),
    )
    .await
    .map_err(RunError::ExampleFoo)?;
    let path = embedded.kubeconfig().display();
    println!("sample-controller: kubeconfig written to {path}");
    println!("sample-controller: try `KUBECONFIG={path} kubectl get foos,deployments`");
    run_controller(client, namespace).await
}

/// Runs the controller until Ctrl-C (or SIGTERM); a second one exits at once.
async fn run_controller(client: Client, namespace: Option<String>) -> Result<(), RunError> {
    let mut builder = Manager::builder(client).resync_period(RESYNC_PERIOD);
    if let Some(namespace) = namespace {
        builder = builder.namespace(namespace);
    }
    let manager = builder.build();
    sample::register(&manager)?;
    manager.start().await?;
    Ok(())
}
