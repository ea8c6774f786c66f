//! `storage-cpu`: the client CPU of a whole controller with the manager's caches typed and
//! compact. A `controller-runtime` controller of Pods (one worker) over N listed pods and M watch
//! events; each reconcile reads its primary object and two more cached pods of its namespace
//! (as a controller reads the objects it owns) and touches their specs. Each storage runs in a
//! fresh process, in turns; the run ends when the last event's object was reconciled and fails
//! unless every read found its object. The figure is the client's CPU from the manager's start
//! to that reconcile, compact ÷ typed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use controller_runtime::cache::Storage;
use controller_runtime::prelude::*;
use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::compare::median;
use crate::controller::{start_synced, wait_until};
use crate::fixtures::{DEFAULT_NAMESPACES, namespace_name};
use crate::measure::in_fresh_process;
use crate::server::{RELEASE_PATH, ServerProcess};
use crate::{cpu, memory};

/// How long any one phase may take.
const PHASE_TIMEOUT: Duration = Duration::from_secs(300);
/// The cached pods each reconcile reads beside its primary.
const OWNED_READS: usize = 2;

/// One run: one storage, one process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageRun {
    /// `typed` or `compact`.
    pub storage: String,
    /// Pods listed.
    pub objects: usize,
    /// Watch events sent.
    pub events: usize,
    /// Reconciles run (the queue merges events of one key, so fewer than objects + events).
    pub reconciles: usize,
    /// Objects read from the cache: the primary and [`OWNED_READS`] more per reconcile (the
    /// primary of a deleted pod's reconcile is not there to read).
    pub reads: usize,
    /// Reconciles of pods the events deleted.
    pub deleted: usize,
    /// Client CPU seconds from the start to the last event's reconcile.
    pub cpu_s: f64,
    /// Wall seconds of the same.
    pub wall_s: f64,
    /// Client RSS at the end, bytes.
    pub rss_bytes: u64,
}

/// Both storages over the rounds.
#[derive(Debug, Serialize)]
pub struct StorageCpu {
    /// Rounds run.
    pub rounds: usize,
    /// Decoded objects compact storage kept ([`Storage::recently_decoded`]).
    pub recently_decoded: usize,
    /// Every run, in the order run.
    pub runs: Vec<StorageRun>,
    /// Median client CPU seconds, typed.
    pub typed_cpu_s: f64,
    /// Median client CPU seconds, compact.
    pub compact_cpu_s: f64,
    /// Median client CPU microseconds per reconcile, typed and compact.
    pub typed_cpu_per_reconcile_us: f64,
    /// The same, compact.
    pub compact_cpu_per_reconcile_us: f64,
    /// compact ÷ typed, of the median CPU.
    pub compact_vs_typed_cpu: f64,
    /// Median RSS at the end, typed and compact, bytes.
    pub typed_rss_bytes: u64,
    /// The same, compact.
    pub compact_rss_bytes: u64,
}

/// Runs both storages `rounds` times, in turns, each in a fresh process; compact storage keeps
/// `recently_decoded` decoded objects.
pub fn run(
    objects: usize,
    events: usize,
    rounds: usize,
    recently_decoded: usize,
) -> Result<StorageCpu> {
    let rounds = rounds.max(1);
    let mut runs: Vec<StorageRun> = Vec::new();
    for round in 0..rounds {
        for storage in ["typed", "compact"] {
            eprintln!("storage-cpu: round {} of {rounds}, {storage}", round + 1);
            let args = [
                "storage-cpu-run".to_owned(),
                "--objects".to_owned(),
                objects.to_string(),
                "--events".to_owned(),
                events.to_string(),
                "--storage".to_owned(),
                storage.to_owned(),
                "--recently-decoded".to_owned(),
                recently_decoded.to_string(),
            ];
            runs.push(in_fresh_process(&args)?);
        }
    }
    let of = |storage: &str, figure: fn(&StorageRun) -> f64| {
        median(runs.iter().filter(|r| r.storage == storage).map(figure))
    };
    let per_reconcile = |r: &StorageRun| r.cpu_s * 1e6 / r.reconciles.max(1) as f64;
    let (typed_cpu_s, compact_cpu_s) = (of("typed", |r| r.cpu_s), of("compact", |r| r.cpu_s));
    Ok(StorageCpu {
        rounds,
        recently_decoded,
        typed_cpu_s,
        compact_cpu_s,
        typed_cpu_per_reconcile_us: of("typed", per_reconcile),
        compact_cpu_per_reconcile_us: of("compact", per_reconcile),
        compact_vs_typed_cpu: compact_cpu_s / typed_cpu_s,
        typed_rss_bytes: of("typed", |r| r.rss_bytes as f64) as u64,
        compact_rss_bytes: of("compact", |r| r.rss_bytes as f64) as u64,
        runs,
    })
}

/// One human line.
pub fn describe(figures: &StorageCpu) -> String {
    format!(
        "a controller reading 3 cached pods per reconcile, median of {} rounds ({} recently decoded kept): client CPU typed {:.2} s ({:.1} µs/reconcile), compact {:.2} s ({:.1} µs/reconcile): compact ÷ typed {:.2}×; RSS {:.0} vs {:.0} MiB",
        figures.rounds,
        figures.recently_decoded,
        figures.typed_cpu_s,
        figures.typed_cpu_per_reconcile_us,
        figures.compact_cpu_s,
        figures.compact_cpu_per_reconcile_us,
        figures.compact_vs_typed_cpu,
        figures.typed_rss_bytes as f64 / (1024.0 * 1024.0),
        figures.compact_rss_bytes as f64 / (1024.0 * 1024.0),
    )
}

/// What the reconciler counts.
#[derive(Default)]
struct Counts {
    reconciles: AtomicUsize,
    reads: AtomicUsize,
    missing: AtomicUsize,
    /// Reconciles of deleted pods (the events delete pods they added), whose primary is gone.
    deleted: AtomicUsize,
    /// Containers seen in the specs read (so the reads cannot be optimized away).
    containers: AtomicUsize,
}

impl Counts {
    fn read(&self, pod: Option<Arc<Pod>>) {
        match pod {
            Some(pod) => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                let containers = pod.spec.as_ref().map_or(0, |spec| spec.containers.len());
                self.containers.fetch_add(containers, Ordering::Relaxed);
            }
            None => {
                self.missing.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The number `i` of the pod `pod-<i>`.
fn pod_number(name: &str) -> Option<usize> {
    name.strip_prefix("pod-")?.parse().ok()
}

/// The pod numbers of the pods `pod-<i>` reads beside itself: the next listed ones of its
/// namespace (listed pods are never deleted).
fn owned_of(name: &str, objects: usize, namespaces: usize) -> Vec<usize> {
    let Some(i) = pod_number(name) else {
        return Vec::new();
    };
    (1..=OWNED_READS)
        .map(|k| (i + k * namespaces) % objects)
        .collect()
}

/// One run in this process: the controller over a fresh server, with `compact` storage (keeping
/// `recently_decoded` decoded objects) or typed.
pub async fn run_one(
    objects: usize,
    events: usize,
    compact: bool,
    recently_decoded: usize,
) -> Result<StorageRun> {
    let server = ServerProcess::spawn(objects, events, None)?;
    let client = server.client()?;
    let marker = server.info.watch_marker.clone();
    let shutdown = CancellationToken::new();
    let storage = if compact {
        Storage::compact().recently_decoded(recently_decoded)
    } else {
        Storage::typed()
    };
    let manager = Arc::new(
        Manager::builder(client.clone())
            .handle_signals(false)
            .shutdown_token(shutdown.clone())
            .default_storage(storage)
            .build(),
    );
    let counts = Arc::new(Counts::default());
    let marker_seen = Arc::new(AtomicUsize::new(0));
    let reconciler = reconciler_fn({
        let (counts, marker, marker_seen) = (counts.clone(), marker.clone(), marker_seen.clone());
        move |request: Request, ctx: Context<Pod>| {
            let (counts, marker, marker_seen) =
                (counts.clone(), marker.clone(), marker_seen.clone());
            async move {
                let primary = ctx.get();
                if request.name() == marker.name
                    && primary
                        .as_ref()
                        .and_then(|pod| pod.metadata.resource_version.as_deref())
                        == Some(marker.resource_version.as_str())
                {
                    marker_seen.store(1, Ordering::SeqCst);
                }
                match primary {
                    Some(pod) => counts.read(Some(pod)),
                    // A pod the events added and deleted again: its deletion's reconcile.
                    None if pod_number(request.name()).is_some_and(|i| i >= objects) => {
                        counts.deleted.fetch_add(1, Ordering::Relaxed);
                    }
                    None => counts.read(None),
                }
                let pods = ctx.cache().lister::<Pod>()?;
                for j in owned_of(request.name(), objects, DEFAULT_NAMESPACES) {
                    let namespace = namespace_name(j % DEFAULT_NAMESPACES);
                    counts.read(pods.namespace(&namespace).get(&format!("pod-{j}"))?);
                }
                counts.reconciles.fetch_add(1, Ordering::Relaxed);
                Ok::<_, ReconcileError>(Action::done())
            }
        }
    });
    Controller::new(&manager)
        .for_(Watch::of::<Pod>())
        .named("storage-cpu")
        .build(reconciler)?;
    let (cpu_before, started) = (cpu::process()?, Instant::now());
    let running = start_synced(&manager, PHASE_TIMEOUT).await?;
    wait_until("the initial reconciles", PHASE_TIMEOUT, || {
        counts.reconciles.load(Ordering::Relaxed) >= objects
    })
    .await?;
    ServerProcess::control(&client, RELEASE_PATH).await?;
    wait_until("the last event's reconcile", PHASE_TIMEOUT, || {
        marker_seen.load(Ordering::SeqCst) == 1
    })
    .await?;
    let (cpu_s, wall_s) = (
        (cpu::process()? - cpu_before).as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
    let rss_bytes = memory::read()?.rss;
    shutdown.cancel();
    running.await?.context("manager failed")?;
    let (reconciles, reads, deleted) = (
        counts.reconciles.load(Ordering::Relaxed),
        counts.reads.load(Ordering::Relaxed),
        counts.deleted.load(Ordering::Relaxed),
    );
    let expected = reconciles * (1 + OWNED_READS) - deleted;
    ensure!(
        counts.missing.load(Ordering::Relaxed) == 0 && reads == expected,
        "not every read found its pod: {reads} of {expected} over {reconciles} reconciles ({deleted} of deleted pods)"
    );
    ensure!(
        counts.containers.load(Ordering::Relaxed) >= reads,
        "the specs read had fewer containers than pods"
    );
    Ok(StorageRun {
        storage: if compact { "compact" } else { "typed" }.to_owned(),
        objects,
        events,
        reconciles,
        reads,
        deleted,
        cpu_s,
        wall_s,
        rss_bytes,
    })
}
