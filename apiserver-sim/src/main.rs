//! Standalone simulator: `apiserver-sim --port 6443 --kubeconfig ./kubeconfig` (built with the
//! `cli` feature: `cargo run -p kube-rt-apiserver-sim --features cli -- --help`).

use std::path::PathBuf;

use clap::Parser;

/// In-process Kubernetes API server simulator, served standalone.
#[derive(Debug, Parser)]
#[command(name = "apiserver-sim", version, about)]
struct Args {
    /// Port to listen on (127.0.0.1); 0 picks a free one.
    #[arg(long, default_value_t = 6443)]
    port: u16,
    /// Where to write a kubeconfig pointing at the server.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Watch history kept per resource.
    #[arg(long, default_value_t = 10_000)]
    history_limit: usize,
    /// Simulate workloads: Deployments, ReplicaSets, Jobs and Services are run by simulated
    /// controllers and pods by a simulated node, each pod starting (and a batch pod
    /// finishing) this many milliseconds after the previous step (`--workloads` alone:
    /// 1000 ms). Off by default.
    #[arg(long, value_name = "MS", num_args = 0..=1, default_missing_value = "1000", require_equals = true)]
    workloads: Option<u64>,
    /// Chaos mode: seed of its fault schedule and per-request draws. Setting it (or
    /// --chaos-profile) turns chaos on; see /__sim/chaos for the faults injected.
    #[arg(long, value_name = "N")]
    chaos_seed: Option<u64>,
    /// Chaos mode's profile: gentle, standard (or default), harsh. Turns chaos on (seed 0
    /// unless --chaos-seed is given).
    #[arg(long, value_name = "NAME")]
    chaos_profile: Option<apiserver_sim::ChaosProfile>,
    /// Where a webhook service is reachable: `namespace/name[:port]=https://127.0.0.1:PORT`
    /// (repeatable). Admission and conversion webhooks configured with `clientConfig.service`
    /// are called there, the certificate verified for `<name>.<namespace>.svc`.
    #[arg(long, value_name = "NS/NAME[:PORT]=URL", value_parser = apiserver_sim::parse_service_endpoint)]
    service_endpoint: Vec<apiserver_sim::ServiceEndpoint>,
    /// Authenticate requests with bearer tokens and authorize them with RBAC, like a real
    /// cluster: the kubeconfig carries the admin token, ServiceAccount tokens come from the
    /// TokenRequest API, refusals are 403 Forbidden. Off by default. kubectl sends no
    /// credentials over plain HTTP, so use kube clients in this mode.
    #[arg(long)]
    rbac: bool,
    /// With --rbac: admit writes with OwnerReferencesPermissionEnforcement (owner references
    /// need delete on the object, blockOwnerDeletion needs update on the owner's finalizers),
    /// as hardened clusters do.
    #[arg(long, requires = "rbac")]
    owner_references_permission_enforcement: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let mut builder = apiserver_sim::ApiServer::builder()
        .port(args.port)
        .history_limit(args.history_limit)
        .rbac(args.rbac)
        .owner_references_permission_enforcement(args.owner_references_permission_enforcement);
    for ep in &args.service_endpoint {
        builder = builder.service_endpoint(&ep.namespace, &ep.name, ep.port, &ep.url);
    }
    if let Some(ms) = args.workloads {
        builder = builder.workload_simulator(std::time::Duration::from_millis(ms));
    }
    if args.chaos_seed.is_some() || args.chaos_profile.is_some() {
        let chaos = apiserver_sim::ChaosConfig {
            seed: args.chaos_seed.unwrap_or(0),
            profile: args.chaos_profile.unwrap_or_default(),
        };
        tracing::info!(seed = chaos.seed, profile = %chaos.profile, "chaos mode on");
        builder = builder.chaos(chaos);
    }
    let server = builder.start().await?;
    if let Some(path) = &args.kubeconfig {
        server.write_kubeconfig(path)?;
        tracing::info!(path = %path.display(), "kubeconfig written");
    }
    tracing::info!(url = %server.url(), "serving; Ctrl-C to stop");
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
