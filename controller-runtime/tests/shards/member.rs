//! A shard process: one sharded manager of the ring [`RING`] under the shard name its slot
//! gives it, running `mirror` (ConfigMap → an owned Secret, see `workload/`) with every
//! reconcile journaled. Each reconcile first waits a while, as a call to a slow external system
//! would (up to [`MemberSettings::work`]), so reconciles are in flight when objects move.
//!
//! It exits 0 after a graceful shutdown (SIGTERM: its Lease is released), with
//! `members::LOST_LEASE_EXIT` when its shard Lease could not be renewed
//! (`manager::Error::ShardLeaseLost`), and 2 on any other failure.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use controller_runtime::controller::{Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::manager::{Error, Manager};
use controller_runtime::sharding::ShardingConfig;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;

use crate::members::journal::Writer;
use crate::members::{self, MemberEnv};
use crate::workload;

/// The prefix of the variables that make a process a shard (see `members::MemberEnv`).
pub const PREFIX: &str = "SHARDS";
/// The ring.
pub const RING: &str = "soak";
/// The variable that tells a shard the namespace of the objects and of the shard Leases (the
/// run's: `default` on the simulator, one of the run's own on a real cluster), the only one
/// it caches.
const NAMESPACE: &str = "SHARDS_NAMESPACE";
/// Shard Lease timings: short, so a silent shard is taken over within a CI run (after two
/// Lease durations), and one that cannot renew stops after the renew deadline; with room for
/// a loaded machine (the shards, the sharder and the server share two cores).
pub const LEASE_DURATION: Duration = Duration::from_secs(4);
pub const RENEW_DEADLINE: Duration = Duration::from_secs(3);
const RETRY_PERIOD: Duration = Duration::from_millis(500);
const SHARDER_RESYNC: Duration = Duration::from_secs(1);

/// What a shard process is told besides `members::MemberEnv`.
#[derive(Debug, Clone, Copy)]
pub struct MemberSettings {
    /// Whether the ring moves objects off live shards through the drain handshake.
    pub drain_handshake: bool,
    /// The longest wait of a reconcile (each waits a random part of it).
    pub work: Duration,
    /// Whether every reconcile waits all of `work`.
    pub fixed_work: bool,
    /// Concurrent reconciles.
    pub workers: usize,
}

impl MemberSettings {
    const DRAIN: &'static str = "SHARDS_DRAIN_HANDSHAKE";
    const WORK_MS: &'static str = "SHARDS_WORK_MS";
    const FIXED: &'static str = "SHARDS_FIXED_WORK";
    const WORKERS: &'static str = "SHARDS_WORKERS";

    /// The environment that tells a shard process these settings, and that it works in
    /// `namespace`.
    pub fn vars(&self, namespace: &str) -> Vec<(&'static str, OsString)> {
        let flag = |on: bool| OsString::from(if on { "1" } else { "0" });
        vec![
            (NAMESPACE, namespace.into()),
            (Self::DRAIN, flag(self.drain_handshake)),
            (Self::WORK_MS, self.work.as_millis().to_string().into()),
            (Self::FIXED, flag(self.fixed_work)),
            (Self::WORKERS, self.workers.to_string().into()),
        ]
    }

    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        Self {
            drain_handshake: var(Self::DRAIN) != "0",
            work: Duration::from_millis(var(Self::WORK_MS).parse().unwrap_or(0)),
            fixed_work: var(Self::FIXED) == "1",
            workers: var(Self::WORKERS).parse().unwrap_or(2),
        }
    }
}

/// The shard a member's identity (`<shard>-<incarnation>`) belongs to.
pub fn shard_of(identity: &str) -> &str {
    identity
        .rsplit_once('-')
        .map_or(identity, |(shard, _)| shard)
}

/// Runs the shard until it is killed, stopped or loses its Lease; the exit code.
pub fn run(env: &MemberEnv) -> i32 {
    let settings = MemberSettings::from_env();
    let namespace = std::env::var(NAMESPACE).unwrap_or_else(|_| "default".to_owned());
    members::run_member(
        env,
        |e| matches!(e, Error::ShardLeaseLost { .. }),
        |client, log| {
            let shard = shard_of(&env.identity).to_owned();
            serve(shard, settings, namespace, client, log)
        },
    )
}

async fn serve(
    shard: String,
    settings: MemberSettings,
    namespace: String,
    client: kube::Client,
    log: Writer,
) -> members::Served {
    let sharding = ShardingConfig::new(RING, namespace.clone())
        .shard(shard)
        .lease_timings(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD)
        .sharder_resync_period(SHARDER_RESYNC)
        .drain_handshake(settings.drain_handshake);
    let manager = Arc::new(
        Manager::builder(client)
            .namespace(namespace)
            .sharding(sharding)
            .cache_sync_timeout(Duration::from_secs(60))
            .build(),
    );
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .named("mirror")
        .max_concurrent_reconciles(settings.workers)
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let log = log.clone();
                async move {
                    let seen = ctx.get().and_then(|c| c.resource_version());
                    let reconcile = log.begin("mirror", req.key.to_string(), seen);
                    let work = if settings.fixed_work {
                        settings.work
                    } else {
                        settings.work.mul_f64(fastrand::f64())
                    };
                    tokio::time::sleep(work).await;
                    reconcile.finish(workload::mirror(&req, &ctx).await)
                }
            },
        ))?;
    Ok(manager.start().await?)
}
