//! A member process: one manager electing on the soak's Lease, running the workload's
//! controllers with every reconcile logged, and writing its cache (name → resourceVersion) and
//! its informers' list and watch counts to a snapshot file a few times a second. Against a real
//! server it watches only the run's namespace (`LEADERS_NAMESPACE`), which is all its
//! ServiceAccount may read. It exits 0 when told to stop,
//! `members::LOST_LEASE_EXIT` when it loses its lease, and 2 on any other failure.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use controller_runtime::leader_election::LeaderElectionConfig;
use controller_runtime::manager::{Error, Manager};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;

use crate::members::journal::Writer;
use crate::members::{self, MemberEnv};
use crate::workload;

/// The prefix of the variables that make a process a member (see `members::MemberEnv`).
pub const PREFIX: &str = "LEADERS";
/// The Lease the members elect on.
pub const LEASE: &str = "leaders-soak";
/// The variable naming the namespace of the workload and the Lease (unset: `default`, where
/// the simulator run keeps them, every namespace watched).
pub const NAMESPACE_ENV: &str = "LEADERS_NAMESPACE";
/// Election timings: short, so failovers fit a CI run. A killed leader's lease expires after
/// [`LEASE_SECS`]; a leader that cannot renew steps down after [`RENEW_DEADLINE`].
pub const LEASE_SECS: u64 = 3;
pub const RENEW_DEADLINE: Duration = Duration::from_secs(2);
const RETRY_PERIOD: Duration = Duration::from_millis(400);

/// Kind (`configmaps`, `secrets`) → name → resourceVersion.
pub type Cache = BTreeMap<String, BTreeMap<String, String>>;

/// What a member writes for the parent: its cache and its informers' requests so far.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub cache: Cache,
    /// List requests of both informers (pages count one each): a climb is a relist.
    pub lists: u64,
    /// Watch requests of both informers.
    pub watches: u64,
}

/// The variable holding a tracing filter for the member's log on stderr (unset: no log).
pub const LOG_ENV: &str = "LEADERS_TRACE";

/// Runs the member until it is killed, stopped or loses its lease; the exit code.
pub fn run(env: &MemberEnv) -> i32 {
    if let Ok(filter) = std::env::var(LOG_ENV) {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    members::run_member(
        env,
        |e| matches!(e, Error::LeadershipLost),
        |client, log| serve(env, client, log),
    )
}

/// Runs the member's manager until it stops; a controller that cannot be built or the
/// manager's own error ends it.
async fn serve(env: &MemberEnv, client: kube::Client, log: Writer) -> members::Served {
    let namespace = std::env::var(NAMESPACE_ENV).ok();
    let election = LeaderElectionConfig::new(namespace.as_deref().unwrap_or("default"), LEASE)
        .identity(env.identity.clone())
        .lease_duration(Duration::from_secs(LEASE_SECS))
        .renew_deadline(RENEW_DEADLINE)
        .retry_period(RETRY_PERIOD);
    let mut builder = Manager::builder(client)
        .leader_election(election)
        .warm_up_before_leadership(true)
        .cache_sync_timeout(Duration::from_secs(60));
    if let Some(namespace) = namespace {
        builder = builder.namespace(namespace);
    }
    let manager = Arc::new(builder.build());
    let mirror_log = log.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .named("mirror")
        .max_concurrent_reconciles(2)
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let log = mirror_log.clone();
                async move {
                    let seen = ctx.get().and_then(|c| c.resource_version());
                    let reconcile = log.begin("mirror", req.key.to_string(), seen);
                    reconcile.finish(workload::mirror(&req, &ctx).await)
                }
            },
        ))?;
    Controller::new(&manager)
        .for_(Watch::of::<Secret>())
        .named("stamp")
        .max_concurrent_reconciles(2)
        .build(reconciler_fn(move |req: Request, ctx: Context<Secret>| {
            let log = log.clone();
            async move {
                let seen = ctx.get().and_then(|s| s.resource_version());
                let reconcile = log.begin("stamp", req.key.to_string(), seen);
                let result: Result<Action, ReconcileError> = workload::stamp(&ctx).await;
                reconcile.finish(result)
            }
        }))?;
    let snapshots = {
        let manager = Arc::clone(&manager);
        let path = env.snapshot.clone();
        tokio::spawn(async move {
            loop {
                write_snapshot(&manager, &path);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let outcome = manager.start().await;
    snapshots.abort();
    Ok(outcome?)
}

/// Writes the cache to `path` (through a rename, so the parent never reads half of it).
fn write_snapshot(manager: &Manager, path: &std::path::Path) {
    let names = |list: Vec<(String, Option<String>)>| -> BTreeMap<String, String> {
        list.into_iter()
            .map(|(name, rv)| (name, rv.unwrap_or_default()))
            .collect()
    };
    let cm_informer = manager.cache().informers::<ConfigMap>().unwrap().remove(0);
    let secret_informer = manager.cache().informers::<Secret>().unwrap().remove(0);
    let cms = cm_informer.indexer().list();
    let secrets = secret_informer.indexer().list();
    let cache: Cache = [
        (
            "configmaps".to_owned(),
            names(
                cms.iter()
                    .map(|o| (o.name_any(), o.resource_version()))
                    .collect(),
            ),
        ),
        (
            "secrets".to_owned(),
            names(
                secrets
                    .iter()
                    .map(|o| (o.name_any(), o.resource_version()))
                    .collect(),
            ),
        ),
    ]
    .into();
    let snapshot = Snapshot {
        cache,
        lists: cm_informer.list_count() + secret_informer.list_count(),
        watches: cm_informer.watch_count() + secret_informer.watch_count(),
    };
    let partial = path.with_extension("partial");
    if let Ok(text) = serde_json::to_vec(&snapshot)
        && std::fs::write(&partial, text).is_ok()
    {
        let _ = std::fs::rename(&partial, path);
    }
}
