//! One measurement of a cache implementation ([`Peer`]) against a fresh server: sync, then the
//! watch events, then a forced relist; and running such a measurement in a fresh process.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde::{Deserialize, Serialize};

use crate::fixtures::{DEFAULT_NAMESPACES, Marker};
use crate::readers::{ListCache, Readers};
use crate::server::{EXPIRE_PATH, RELEASE_PATH, ServerProcess};
use crate::{cpu, memory};

/// How long any one phase may take before the run fails.
const PHASE_TIMEOUT: Duration = Duration::from_secs(300);
/// How often the cache is polled for a marker.
const POLL: Duration = Duration::from_millis(1);

/// What a run measures and how the cache is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct RunOptions {
    /// Pods in the initial list.
    #[arg(long, default_value_t = 100_000)]
    pub objects: usize,
    /// Watch events after the sync (0: no watch phase).
    #[arg(long, default_value_t = 100_000)]
    pub events: usize,
    /// Initial list by a streaming watch (sendInitialEvents) instead of pages.
    #[arg(long)]
    pub stream: bool,
    /// Strip managedFields before caching.
    #[arg(long)]
    pub strip_managed_fields: bool,
    /// Ours only: keep compact copies of the decoded objects (`ReflectorOptions::compact_objects`).
    #[arg(long)]
    pub compact_objects: bool,
    /// Force a 410 after the watch phase and measure the relist.
    #[arg(long)]
    pub relist: bool,
    /// Force this list page size on every list, relists included (default: each peer's own).
    #[arg(long)]
    pub page_size: Option<u32>,
    /// Namespaces the fixture spreads its pods over.
    #[arg(long, default_value_t = DEFAULT_NAMESPACES)]
    pub namespaces: usize,
    /// One cache per namespace instead of one cluster-wide cache (metadata peers only).
    #[arg(long)]
    pub per_namespace: bool,
    /// Ours only: the fifo the informer runs on (default: the informer's own).
    #[arg(long, value_enum)]
    #[serde(default)]
    pub fifo: Option<FifoName>,
    /// Ours only: the most items the informer pops from its fifo at once (default: the
    /// informer's own, 1 000).
    #[arg(long)]
    #[serde(default)]
    pub pop_batch: Option<usize>,
    /// Ours only: tasks that list the whole cache in a loop while the watch events arrive (as a
    /// controller's workers read its cache; 0: none).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub readers: usize,
}

/// The fifo an informer of ours runs on ([`informer::FifoKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FifoName {
    /// The delta fifo.
    Deltas,
    /// The in-order fifo.
    InOrder,
}

impl FifoName {
    /// The informer's name for this fifo.
    pub fn kind(self) -> informer::FifoKind {
        match self {
            FifoName::Deltas => informer::FifoKind::Deltas,
            FifoName::InOrder => informer::FifoKind::InOrder,
        }
    }

    /// The name on the command line.
    pub fn arg(self) -> &'static str {
        match self {
            FifoName::Deltas => "deltas",
            FifoName::InOrder => "in-order",
        }
    }
}

/// A cache kept in step with the server: ours (informer) or kube-runtime's reflector store.
pub trait Peer: Sized {
    /// Name in the figures.
    const NAME: &'static str;
    /// Starts listing and watching.
    fn start(client: kube::Client, options: &RunOptions) -> Result<Self>;
    /// Resolves once the initial list is in the cache.
    fn synced(&self) -> impl Future<Output = ()> + Send;
    /// The cached resource version of the marker's pod, if it is cached.
    fn resource_version(&self, marker: &Marker) -> Result<Option<String>>;
    /// Objects in the cache.
    fn len(&self) -> usize;
    /// Stops the cache.
    fn stop(self) -> impl Future<Output = ()> + Send;
    /// A function listing the whole cache, for [`RunOptions::readers`] (`None`: this peer
    /// has no readers).
    fn lister(&self) -> Option<ListCache> {
        None
    }
}

/// The figures of one run (one process).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFigures {
    /// `ours` or `kube-runtime`.
    pub peer: String,
    /// How the run was configured.
    pub options: RunOptions,
    /// Seconds from start to synced.
    pub sync_s: f64,
    /// Pods per second into the cache during the initial list.
    pub sync_objects_per_s: f64,
    /// CPU seconds this process used from start to synced (all its threads; the server runs in
    /// a process of its own).
    pub sync_cpu_s: f64,
    /// Pods in the cache once synced.
    pub objects_synced: usize,
    /// RSS before the cache started.
    pub rss_before_bytes: u64,
    /// RSS once synced.
    pub rss_synced_bytes: u64,
    /// (RSS synced − RSS before) ÷ pods.
    pub bytes_per_object: f64,
    /// As `bytes_per_object`, after `malloc_trim` returned the allocator's free memory: what
    /// the cache holds, without freed list buffers.
    pub bytes_per_object_trimmed: f64,
    /// Events per second from release until the last event is in the cache.
    pub watch_events_per_s: Option<f64>,
    /// CPU seconds this process used from the release of the events until they were cached.
    pub watch_cpu_s: Option<f64>,
    /// CPU seconds the server process used over the same span (sending the events).
    pub watch_server_cpu_s: Option<f64>,
    /// Pods in the cache after the events.
    pub objects_after_watch: Option<usize>,
    /// Whole-cache lists per second the readers made during the watch events (with readers).
    #[serde(default)]
    pub watch_reads_per_s: Option<f64>,
    /// Peak RSS from the 410 until the relist is in the cache, ÷ RSS just before.
    pub relist_peak_ratio: Option<f64>,
    /// Seconds from the 410 until the relist is in the cache.
    pub relist_s: Option<f64>,
}

/// Runs the measurement in this process, against a server process of its own.
pub async fn run<P: Peer>(options: RunOptions) -> Result<RunFigures> {
    let server =
        ServerProcess::spawn_in(options.objects, options.events, options.namespaces, None)?;
    let client = server.client()?;
    let before = memory::read()?;
    let cpu_before = cpu::process()?;
    let started = Instant::now();
    let peer = P::start(client.clone(), &options)?;
    tokio::time::timeout(PHASE_TIMEOUT, peer.synced())
        .await
        .context("sync timed out")?;
    let sync_s = started.elapsed().as_secs_f64();
    let sync_cpu_s = cpu::process()?.saturating_sub(cpu_before).as_secs_f64();
    let objects_synced = peer.len();
    ensure!(
        objects_synced == options.objects,
        "synced with {objects_synced} of {} pods cached",
        options.objects
    );
    let synced = memory::read()?;
    memory::trim();
    let trimmed = memory::read()?;

    let mut figures = RunFigures {
        peer: P::NAME.to_owned(),
        options,
        sync_s,
        sync_objects_per_s: options.objects as f64 / sync_s,
        sync_cpu_s,
        objects_synced,
        rss_before_bytes: before.rss,
        rss_synced_bytes: synced.rss,
        bytes_per_object: synced.rss.saturating_sub(before.rss) as f64 / options.objects as f64,
        bytes_per_object_trimmed: trimmed.rss.saturating_sub(before.rss) as f64
            / options.objects as f64,
        watch_events_per_s: None,
        watch_cpu_s: None,
        watch_server_cpu_s: None,
        objects_after_watch: None,
        watch_reads_per_s: None,
        relist_peak_ratio: None,
        relist_s: None,
    };
    if options.events > 0 {
        let cpu_before = cpu::process()?;
        let server_cpu_before = server.cpu()?;
        let readers = match (options.readers, peer.lister()) {
            (0, _) => None,
            (count, Some(list)) => Some(Readers::start(count, list)),
            (_, None) => bail!("the {} peer has no cache readers", P::NAME),
        };
        let started = Instant::now();
        ServerProcess::control(&client, RELEASE_PATH).await?;
        if options.per_namespace {
            // Each namespace's cache follows its own watch: the last event of one says
            // nothing of the others.
            ensure!(
                server.info.markers_cover_every_namespace,
                "--per-namespace needs at least as many pods as namespaces"
            );
            for marker in &server.info.namespace_markers {
                wait_for(&peer, marker).await?;
            }
        } else {
            wait_for(&peer, &server.info.watch_marker).await?;
        }
        let elapsed = started.elapsed().as_secs_f64();
        figures.watch_events_per_s = Some(options.events as f64 / elapsed);
        if let Some(readers) = readers {
            let lists = readers
                .stop(options.objects.min(server.info.objects_after_events))
                .await?;
            figures.watch_reads_per_s = Some(lists as f64 / elapsed);
        }
        let seconds = |d: std::time::Duration| Some(d.as_secs_f64());
        figures.watch_cpu_s = seconds(cpu::process()?.saturating_sub(cpu_before));
        figures.watch_server_cpu_s = seconds(server.cpu()?.saturating_sub(server_cpu_before));
        let objects_after_watch = peer.len();
        ensure!(
            objects_after_watch == server.info.objects_after_events,
            "every event arrived with {objects_after_watch} pods cached, not {}",
            server.info.objects_after_events
        );
        figures.objects_after_watch = Some(objects_after_watch);
    }
    if options.relist {
        let before = memory::read()?;
        memory::reset_peak()?;
        let started = Instant::now();
        ServerProcess::control(&client, EXPIRE_PATH).await?;
        for marker in &server.info.relist_markers {
            wait_for(&peer, marker).await?;
        }
        figures.relist_s = Some(started.elapsed().as_secs_f64());
        figures.relist_peak_ratio = Some(memory::read()?.hwm as f64 / before.rss as f64);
    }
    peer.stop().await;
    Ok(figures)
}

/// Polls the cache until the marker's pod has the marker's resource version.
async fn wait_for<P: Peer>(peer: &P, marker: &Marker) -> Result<()> {
    let deadline = Instant::now() + PHASE_TIMEOUT;
    while peer.resource_version(marker)?.as_deref() != Some(marker.resource_version.as_str()) {
        if Instant::now() > deadline {
            bail!(
                "{}/{} never reached resourceVersion {}",
                marker.namespace,
                marker.name,
                marker.resource_version
            );
        }
        tokio::time::sleep(POLL).await;
    }
    Ok(())
}

/// Runs `pipeline-bench <args>` in a fresh process and parses the JSON line it prints.
pub fn in_fresh_process<T: serde::de::DeserializeOwned>(args: &[String]) -> Result<T> {
    let output = Command::new(std::env::current_exe()?)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running pipeline-bench {}", args.join(" ")))?;
    ensure!(
        output.status.success(),
        "pipeline-bench {} failed: {}",
        args.join(" "),
        output.status
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|line| line.starts_with('{'))
        .with_context(|| format!("pipeline-bench {} printed no JSON", args.join(" ")))?;
    Ok(serde_json::from_str(line)?)
}

/// The command-line arguments of a `run` with these options.
pub fn run_args(peer: &str, options: &RunOptions) -> Vec<String> {
    let mut args = vec![
        "run".to_owned(),
        "--peer".to_owned(),
        peer.to_owned(),
        "--objects".to_owned(),
        options.objects.to_string(),
        "--events".to_owned(),
        options.events.to_string(),
        "--namespaces".to_owned(),
        options.namespaces.to_string(),
    ];
    for (flag, on) in [
        ("--stream", options.stream),
        ("--strip-managed-fields", options.strip_managed_fields),
        ("--compact-objects", options.compact_objects),
        ("--relist", options.relist),
        ("--per-namespace", options.per_namespace),
    ] {
        if on {
            args.push(flag.to_owned());
        }
    }
    if let Some(page_size) = options.page_size {
        args.extend(["--page-size".to_owned(), page_size.to_string()]);
    }
    if let Some(fifo) = options.fifo {
        args.extend(["--fifo".to_owned(), fifo.arg().to_owned()]);
    }
    if let Some(pop_batch) = options.pop_batch {
        args.extend(["--pop-batch".to_owned(), pop_batch.to_string()]);
    }
    if options.readers > 0 {
        args.extend(["--readers".to_owned(), options.readers.to_string()]);
    }
    args
}

/// The measured process's runtime: two worker threads, as the machine has two cores
/// (`PIPELINE_BENCH_WORKERS` overrides the count, for experiments on thread hand-offs).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    let workers = match std::env::var("PIPELINE_BENCH_WORKERS") {
        Ok(value) => value
            .parse()
            .context("PIPELINE_BENCH_WORKERS must be a number")?,
        Err(_) => 2,
    };
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?)
}
