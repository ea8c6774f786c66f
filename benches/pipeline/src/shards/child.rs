//! A shard process (`pipeline-bench shard`, started by `pipeline-bench shards`): one sharded
//! manager of the bench ring over the measuring process's apiserver-sim, with one controller of
//! ConfigMaps whose reconciler waits as an external call would, counting its reconciles by round
//! into its status file. It exits when its stdin closes (the measuring process ended).

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use controller_runtime::prelude::*;
use controller_runtime::sharding::ShardingConfig;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;

use crate::shards::status::{ROUND_ANNOTATION, RoundStatus, ShardStatus, now_us};

/// The ring the shard processes join.
pub const RING: &str = "bench";
/// The namespace of the shard Leases and of the objects.
pub const NAMESPACE: &str = "default";
/// Shard Lease timings: leader election's defaults, renewed every second so that readiness
/// (which the shard reads from its Lease every retry period) comes sooner.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY_PERIOD: Duration = Duration::from_secs(1);
/// How often the status file is rewritten.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// What the measuring process tells a shard process.
#[derive(Debug, Clone, clap::Args)]
pub struct ShardArgs {
    /// The API server's URL.
    #[arg(long)]
    pub server: String,
    /// This shard's name.
    #[arg(long)]
    pub name: String,
    /// Where to write the status file.
    #[arg(long)]
    pub status: PathBuf,
    /// Reconcile workers (`max_concurrent_reconciles`).
    #[arg(long)]
    pub workers: usize,
    /// Milliseconds each reconcile waits.
    #[arg(long)]
    pub reconcile_ms: u64,
}

/// The reconciles so far.
#[derive(Debug, Default)]
struct Record {
    in_flight: AtomicU64,
    last_start_us: AtomicI64,
    rounds: Mutex<BTreeMap<u32, RoundRecord>>,
}

#[derive(Debug, Default)]
struct RoundRecord {
    names: BTreeSet<String>,
    reconciles: u64,
    first_start_us: i64,
    last_end_us: i64,
}

impl Record {
    fn begin(&self, started_us: i64) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.last_start_us.fetch_max(started_us, Ordering::SeqCst);
    }

    fn end(&self, round: u32, name: String, started_us: i64, ended_us: i64) {
        {
            let mut rounds = self.rounds.lock();
            let record = rounds.entry(round).or_default();
            if record.reconciles == 0 || started_us < record.first_start_us {
                record.first_start_us = started_us;
            }
            record.last_end_us = record.last_end_us.max(ended_us);
            record.reconciles += 1;
            record.names.insert(name);
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    fn rounds(&self) -> BTreeMap<u32, RoundStatus> {
        self.rounds
            .lock()
            .iter()
            .map(|(&round, record)| {
                let status = RoundStatus {
                    names: record.names.iter().cloned().collect(),
                    reconciles: record.reconciles,
                    first_start_us: record.first_start_us,
                    last_end_us: record.last_end_us,
                };
                (round, status)
            })
            .collect()
    }
}

/// Runs the shard process until it is killed or its stdin closes.
pub fn run(args: ShardArgs) -> Result<()> {
    std::thread::spawn(|| {
        // Nothing is ever written to stdin: the read returns when the parent's end closes.
        let _ = std::io::stdin().read(&mut [0_u8; 1]);
        std::process::exit(0);
    });
    crate::runtime()?.block_on(serve(args))
}

async fn serve(args: ShardArgs) -> Result<()> {
    let uri: http::Uri = args.server.parse().context("--server is not a URL")?;
    let mut config = kube::Config::new(uri);
    config.default_namespace = NAMESPACE.into();
    let client = kube::Client::try_from(config)?;
    let sharding = ShardingConfig::new(RING, NAMESPACE)
        .shard(args.name.clone())
        .lease_timings(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD);
    let manager = Arc::new(
        Manager::builder(client)
            .sharding(sharding)
            .handle_signals(false)
            .build(),
    );
    let record = Arc::new(Record::default());
    let wait = Duration::from_millis(args.reconcile_ms);
    let reconciler = reconciler_fn({
        let record = Arc::clone(&record);
        move |request: Request, ctx: Context<ConfigMap>| {
            let record = Arc::clone(&record);
            let name = request.name().to_owned();
            let round = ctx.get().map_or(0, |object| round_of(&object));
            async move {
                let started = now_us();
                record.begin(started);
                // The external call.
                tokio::time::sleep(wait).await;
                record.end(round, name, started, now_us());
                Ok::<_, Infallible>(Action::done())
            }
        }
    });
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("bench")
        .max_concurrent_reconciles(args.workers)
        .build(reconciler)?;
    // The controller's own cache (built above, so it carries the shard's label selector).
    let informers = manager.cache().informers::<ConfigMap>()?;
    let reporter = tokio::spawn({
        let manager = Arc::clone(&manager);
        async move {
            loop {
                let status = ShardStatus {
                    shard: args.name.clone(),
                    ready: manager
                        .shard()
                        .is_some_and(|shard| shard.member().is_assigned()),
                    leads_sharder: manager
                        .sharder_stats()
                        .is_some_and(|stats| stats.is_leading()),
                    cache_objects: informers.iter().map(|i| i.indexer().len()).sum(),
                    in_flight: record.in_flight.load(Ordering::SeqCst),
                    last_start_us: record.last_start_us.load(Ordering::SeqCst),
                    rounds: record.rounds(),
                };
                if let Err(error) = status.write(&args.status) {
                    eprintln!("shard {}: {error:#}", args.name);
                }
                tokio::time::sleep(REPORT_EVERY).await;
            }
        }
    });
    let outcome = manager.start().await;
    reporter.abort();
    outcome.context("the shard's manager stopped")
}

/// The round an object was last touched in (0: never).
fn round_of(object: &ConfigMap) -> u32 {
    object
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(ROUND_ANNOTATION)?.parse().ok())
        .unwrap_or(0)
}
