//! How the sample-controller's manager is configured (namespace, resync, leader election or
//! sharding, probes), shared by the binary's run and its `rbac` subcommand.

use std::net::SocketAddr;

use controller_runtime::cache::Storage;
use controller_runtime::leader_election::LeaderElectionConfig;
use controller_runtime::manager::{Manager, ManagerBuilder};
use controller_runtime::rbac::{Rule, Verb};
use controller_runtime::sharding::ShardingConfig;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Client, Resource};

use super::controller::{RESYNC_PERIOD, SetupError};
use super::foo::Foo;

/// The Lease the replicas elect a leader on (`--leader-elect`).
pub const LEASE_NAME: &str = "sample-controller";
/// The ring the replicas shard Foos over by default (`--shard`, `--shards`).
pub const RING_NAME: &str = "sample-controller";

/// The manager settings the binary's flags choose.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Watch Foos and Deployments in this namespace only (`--namespace`; default: all).
    pub namespace: Option<String>,
    /// Elect a leader on the Lease [`LEASE_NAME`] in this namespace (`--leader-elect`).
    pub lease_namespace: Option<String>,
    /// Serve `/metrics`, `/healthz` and `/readyz` here (`--metrics-addr`).
    pub metrics_addr: Option<SocketAddr>,
    /// Install the Foo CRD before starting, when it is missing (`--install-crd`).
    pub install_crd: bool,
    /// Run as one shard of a ring instead (`--shard`, `--shards`).
    pub sharding: Option<ShardSettings>,
    /// Keep the cached objects compact, decoded when read (`--compact-cache`).
    pub compact_cache: bool,
}

/// One shard of the sample-controller's ring.
#[derive(Clone, Debug)]
pub struct ShardSettings {
    /// The ring (`--ring`, default [`RING_NAME`]).
    pub ring: String,
    /// This replica's shard name (`--shard`; `shard-<i>` with `--shards`).
    pub shard: String,
    /// Where the shard Leases live (`--namespace`, else the client's default namespace).
    pub namespace: String,
}

impl Settings {
    /// The settings of a `--leader-elect` deployment watching all namespaces, electing in
    /// `lease_namespace` (what the manifests in `examples/manifests/` run).
    pub fn leader_elected(lease_namespace: &str) -> Self {
        Self {
            lease_namespace: Some(lease_namespace.to_owned()),
            ..Self::default()
        }
    }
}

/// A manager builder over `client` with `settings` and the Go controller's resync period;
/// build it, then register the controller on it.
pub fn manager_builder(client: Client, settings: &Settings) -> ManagerBuilder {
    let mut builder = Manager::builder(client).resync_period(RESYNC_PERIOD);
    if let Some(namespace) = &settings.namespace {
        builder = builder.namespace(namespace);
    }
    if settings.compact_cache {
        builder = builder.default_storage(Storage::compact());
    }
    if let Some(address) = settings.metrics_addr {
        builder = builder
            .metrics_bind_address(address)
            .health_probe_bind_address(address);
    }
    if let Some(sharding) = &settings.sharding {
        builder = builder.sharding(
            ShardingConfig::new(sharding.ring.clone(), sharding.namespace.clone())
                .shard(sharding.shard.clone()),
        );
    }
    if let Some(lease_namespace) = &settings.lease_namespace {
        builder = builder.leader_election(LeaderElectionConfig::new(
            lease_namespace.clone(),
            LEASE_NAME,
        ));
    }
    builder
}

/// Declares on `manager` what the binary itself does beside the controller with `settings`:
/// with `--install-crd`, creating the Foo CRD (a create cannot be limited to a name) and
/// reading it back until it is established.
pub fn declare_setup(manager: &Manager, settings: &Settings) -> Result<(), SetupError> {
    if settings.install_crd {
        for rule in crd_install_rules() {
            manager.require(rule)?;
        }
    }
    Ok(())
}

/// The name of the Foo CRD: `foos.samplecontroller.k8s.io`.
pub fn crd_name() -> String {
    format!("{}.{}", Foo::plural(&()), Foo::group(&()))
}

/// The rules of `--install-crd`: create CustomResourceDefinitions, and get the Foo's.
fn crd_install_rules() -> [Rule; 2] {
    let crd_name = crd_name();
    [
        Rule::of::<CustomResourceDefinition>().verbs([Verb::Create]),
        Rule::of::<CustomResourceDefinition>()
            .named([crd_name])
            .verbs([Verb::Get]),
    ]
}
