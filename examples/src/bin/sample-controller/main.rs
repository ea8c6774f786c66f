//! `sample-controller`: keeps a Deployment for every `Foo`, like kubernetes/sample-controller.
//!
//! Runs against the cluster that `--kubeconfig`, KUBECONFIG, `~/.kube/config` or the in-cluster
//! environment names; with none (or with `--embedded`) it starts an embedded `apiserver-sim`,
//! installs the Foo CRD, creates `example-foo` and writes a kubeconfig for `kubectl`.
//!
//! `--metrics-addr ADDR` serves `/metrics`, `/healthz` and `/readyz` on ADDR (port 0 picks a free
//! port; the bound address is printed). `--leader-elect` elects a leader among replicas on the
//! Lease `sample-controller` in the controller's namespace. `--shard NAME` makes this replica one
//! shard of the ring `sample-controller` (`--ring`) instead: every replica works at once on the
//! Foos the ring assigns it; `--shards N` runs N shards in this one process to try it (on the
//! embedded server it also creates eight more example Foos, so every shard gets some).
//! `--compact-cache` keeps the cached objects compact (encoded, decoded when read). `sample-controller rbac` prints the
//! least-privilege RBAC roles the controller needs (`crd` prints its CRD).
//!
//! The files follow Go's layout: this one is `main.go` (flags, the cluster, the manager and
//! its run); [`controller`] is `controller.go` (the watches and their predicates, the
//! reconcile with its status updates and events); [`foo`] is the API type; [`operator`] holds
//! the manager's settings, [`rbac`] the generated roles, [`recorder`] the core/v1 event
//! recorder (client-go's `record`).

pub mod controller;
pub mod foo;
pub mod operator;
pub mod rbac;
pub mod recorder;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use controller_runtime::manager;
use controller_runtime::util::with_user_agent;
use examples::cluster::{ClusterError, Embedded, cluster_config, install_crd};
use kube::api::PostParams;
use kube::{Api, Client};

use controller::SetupError;
use foo::{Foo, crd, crd_yaml, new_foo};
use operator::{LEASE_NAME, RING_NAME, Settings, ShardSettings};

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
    /// Watch Foos and Deployments in this namespace only (default: all namespaces). Accepted
    /// before or after a subcommand (`sample-controller rbac --namespace team-a`).
    #[arg(long, value_name = "NAMESPACE", global = true)]
    namespace: Option<String>,
    /// Serve /metrics, /healthz and /readyz on this address (e.g. 0.0.0.0:8080; port 0 picks a
    /// free port). Default: off.
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Elect a leader among replicas on the Lease `sample-controller` in the controller's
    /// namespace (`--namespace`, else the client's default namespace).
    #[arg(long, conflicts_with_all = ["shard", "shards"])]
    leader_elect: bool,
    /// Run as the shard NAME of the ring (one name per replica, e.g. the pod's name; lower
    /// case), with the shard Leases in the controller's namespace: every replica works at
    /// once, each on the Foos the ring assigns it.
    #[arg(long, value_name = "NAME", conflicts_with = "shards")]
    shard: Option<String>,
    /// Run N shards of the ring in this process (`shard-0` ... `shard-<N-1>`), to try sharding
    /// on one machine.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    shards: Option<u16>,
    /// The ring the shards join.
    #[arg(long, value_name = "RING", default_value = RING_NAME)]
    ring: String,
    /// Install the Foo CustomResourceDefinition (what `crd` prints) when the cluster lacks
    /// it, and wait until it is established, before starting. Its rules join `rbac`'s output
    /// when given there too.
    #[arg(long, global = true)]
    install_crd: bool,
    /// Keep the cached Foos and Deployments compact (encoded, decoded when read) instead of as
    /// typed objects: a fraction of the memory (docs/benchmarks.md, "Memory").
    #[arg(long)]
    compact_cache: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the Foo CustomResourceDefinition as YAML (for `kubectl apply -f -`).
    Crd,
    /// Print the least-privilege RBAC roles the controller needs with `--leader-elect`, as
    /// YAML: the ClusterRole, the Role of the Lease's namespace, and with `--namespace` the
    /// Role in that namespace. Generated from what the manager runs;
    /// `examples/manifests/rbac.yaml` is its output.
    Rbac {
        /// The namespace the Lease is in (default: `--namespace`, else `default`, where the
        /// manifests deploy the controller).
        #[arg(long, value_name = "NAMESPACE")]
        lease_namespace: Option<String>,
    },
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
    Manager(#[from] manager::Error),
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
    match &cli.command {
        Some(Command::Crd) => {
            print!("{}", crd_yaml()?);
            return Ok(());
        }
        Some(Command::Rbac { lease_namespace }) => {
            let settings = Settings {
                namespace: cli.namespace.clone(),
                lease_namespace: Some(
                    lease_namespace
                        .clone()
                        .or_else(|| cli.namespace.clone())
                        .unwrap_or_else(|| "default".to_owned()),
                ),
                metrics_addr: None,
                install_crd: cli.install_crd,
                sharding: None,
                compact_cache: false,
            };
            print!("{}", rbac::rbac_yaml(&settings).await?);
            return Ok(());
        }
        None => {}
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
            let config = with_user_agent(config, "sample-controller", env!("CARGO_PKG_VERSION"));
            let client = Client::try_from(config).map_err(ClusterError::from)?;
            run_controller(client, &cli).await
        }
        None => {
            let embedded = Embedded::start().await?;
            println!("sample-controller: no cluster configured, using an embedded apiserver-sim");
            let result = run_embedded(&embedded, &cli).await;
            embedded.shutdown().await;
            result
        }
    }
}

/// Installs the CRD and `example-foo` in the embedded server, then runs the controller.
async fn run_embedded(embedded: &Embedded, cli: &Cli) -> Result<(), RunError> {
    let client = embedded.client()?;
    install_crd(&client, &crd()).await?;
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    let mut names = vec!["example-foo".to_owned()];
    if cli.shards.is_some() {
        names.extend((1..=8).map(|i| format!("example-foo-{i}")));
    }
    for name in &names {
        foos.create(&PostParams::default(), &new_foo(name, name, Some(1)))
            .await
            .map_err(RunError::ExampleFoo)?;
    }
    let path = embedded.kubeconfig().display();
    println!("sample-controller: kubeconfig written to {path}");
    println!("sample-controller: try `KUBECONFIG={path} kubectl get foos,deployments`");
    if cli.shards.is_some() || cli.shard.is_some() {
        let label = controller_runtime::sharding::shard_label(&cli.ring);
        println!(
            "sample-controller: each Foo's shard: `KUBECONFIG={path} kubectl get foos -L {label}`"
        );
    }
    run_controller(client, cli).await
}

/// Runs the controller until Ctrl-C (or SIGTERM); a second one exits at once. With `--shards`,
/// runs that many shards of the ring side by side until they all stopped.
async fn run_controller(client: Client, cli: &Cli) -> Result<(), RunError> {
    let lease_namespace = cli
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    if cli.leader_elect {
        println!("sample-controller: leader election on lease {lease_namespace}/{LEASE_NAME}");
    }
    let shard = |name: String| ShardSettings {
        ring: cli.ring.clone(),
        shard: name,
        namespace: lease_namespace.clone(),
    };
    let shards: Vec<Option<ShardSettings>> = match (&cli.shard, cli.shards) {
        (Some(name), _) => vec![Some(shard(name.clone()))],
        (None, Some(count)) => (0..count)
            .map(|i| Some(shard(format!("shard-{i}"))))
            .collect(),
        (None, None) => vec![None],
    };
    let settings = Settings {
        namespace: cli.namespace.clone(),
        lease_namespace: cli.leader_elect.then_some(lease_namespace.clone()),
        metrics_addr: cli.metrics_addr,
        install_crd: cli.install_crd,
        sharding: None,
        compact_cache: cli.compact_cache,
    };
    if settings.install_crd {
        install_crd(&client, &crd()).await?;
        let name = operator::crd_name();
        println!("sample-controller: CRD {name} installed and established");
    }
    let runs = shards.into_iter().enumerate().map(|(index, sharding)| {
        if let Some(sharding) = &sharding {
            println!(
                "sample-controller: shard {} of ring {} (shard Leases in {lease_namespace})",
                sharding.shard, sharding.ring
            );
        }
        let settings = Settings {
            sharding,
            // One address per process: the first shard serves it.
            metrics_addr: settings.metrics_addr.filter(|_| index == 0),
            ..settings.clone()
        };
        run_manager(client.clone(), settings)
    });
    futures::future::try_join_all(runs).await?;
    Ok(())
}

/// Runs one manager with `settings` until it stops.
async fn run_manager(client: Client, settings: Settings) -> Result<(), RunError> {
    let manager = operator::manager_builder(client, &settings).build();
    controller::register(&manager)?;
    operator::declare_setup(&manager, &settings)?;
    let start = manager.start();
    tokio::pin!(start);
    if settings.metrics_addr.is_some() {
        // Print the bound address (port 0 picks one) once `start` has bound it.
        loop {
            tokio::select! {
                result = &mut start => return Ok(result?),
                () = tokio::time::sleep(std::time::Duration::from_millis(10)) => {
                    if let Some(address) = manager.addresses().metrics {
                        println!("sample-controller: serving /metrics, /healthz and /readyz on http://{address}");
                        break;
                    }
                }
            }
        }
    }
    start.await?;
    Ok(())
}
