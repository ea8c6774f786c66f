//! Churn soak: one manager runs the soak workload (`mirror` and `stamp`, see `workload/`)
//! against apiserver-sim while a driver churns ConfigMaps for a long time; the process's
//! resident memory and open file descriptors are sampled at a fixed interval, and must not
//! grow once warmed up. When the churn stops, every listener buffer and work queue must drain
//! to zero and the caches must equal the server.
//!
//! A test binary of its own, so the process it measures runs nothing but this workload (the
//! in-process API server included; its event history is capped, see [`HISTORY_LIMIT`]).
//!
//! Environment (all optional):
//!
//! - `CHURN_SECS`: length of the churn, default [`DEFAULT_SECS`] (the CI run); an hour is 3600;
//! - `CHURN_WARMUP_SECS`: samples before this are not judged; default a quarter of a churn of
//!   20 minutes or more (15 minutes of an hour), half of a shorter one;
//! - `CHURN_SAMPLE_SECS`: sampling interval; default a sixtieth of the churn, between 5 and 60 s
//!   (so once a minute in an hour-long run);
//! - `CHURN_SEED` (default [`DEFAULT_SEED`]): the driver's and the chaos' seed;
//! - `CHURN_PROFILE`: `gentle` (default), `standard`, `harsh` or `none` (no chaos).
//!
//! Growth is judged between the first and the last samples after warm-up. RSS: the medians of
//! the first and last few, within [`MAX_GROWTH_PERCENT`]. Open descriptors are judged twice.
//! While the churn runs, the floor (the fewest) of the second half of the samples may exceed
//! that of the first half by [`MAX_GROWTH_PERCENT`], or reach the most descriptors the process
//! held during the warm-up, plus [`POOL_ALLOWANCE`]: connections opened and closed under chaos
//! move a sample's count by several either way (21–31 in a 90 s run), and the client's pool
//! keeps a varying number of idle connections (a step of 2 to 6 that lasts the rest of a run
//! was seen three times), while a leak keeps growing. Then, once the manager and the server
//! are stopped and dropped, every descriptor opened since the start must be closed again
//! (within [`SHUTDOWN_SLACK`]): a pool closes its connections, a leaked descriptor stays. Linux
//! only: the figures come from `/proc/self`.

#[path = "../workload/mod.rs"]
mod workload;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosProfile};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use kube_rt_controller_runtime::{
    controller::{Context, Controller, ControllerHandle, Request, Watch, reconciler_fn},
    leader_election::LeaderElectionConfig,
    manager::Manager,
    metrics::Metrics,
};
use prometheus_parse::{Scrape, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const DEFAULT_SECS: u64 = 60;
const DEFAULT_SEED: u64 = 20_261_125;
/// How far RSS and open descriptors may grow between the start and the end of the judged part.
const MAX_GROWTH_PERCENT: f64 = 5.0;
/// Descriptors the churn's floor may gain over the warm-up's peak: idle connections a pool
/// keeps longer (the client's requests run with up to a handful at once).
const POOL_ALLOWANCE: u64 = 8;
/// Descriptors that may still be open, beyond those open before the server started, once the
/// server and the manager are stopped and dropped.
const SHUTDOWN_SLACK: u64 = 2;
/// How long the descriptors may take to close after the shutdown.
const SHUTDOWN_CLOSE_LIMIT: Duration = Duration::from_secs(10);
/// Events the server keeps for watches to resume from; small, so the server's own memory is at
/// its steady size early. Samples count only once the server has written twice as many events
/// (and the warm-up time has passed).
const HISTORY_LIMIT: usize = 1_000;
/// ConfigMap names the driver picks from.
const NAMES: usize = 40;
const NS: &str = "default";
/// How long the buffers, queues and caches may take to settle once the churn stopped.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy)]
struct Settings {
    secs: u64,
    warmup: u64,
    sample: u64,
    seed: u64,
    profile: Option<ChaosProfile>,
}

impl Settings {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let number = |name: &str| {
            var(name).map(|v| {
                v.trim()
                    .parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name} must be an unsigned integer, not {v:?}"))
            })
        };
        let secs = number("CHURN_SECS").unwrap_or(DEFAULT_SECS);
        let profile =
            match var("CHURN_PROFILE").as_deref().map(str::trim) {
                None => Some(ChaosProfile::Gentle),
                Some("none") => None,
                Some(name) => Some(name.parse().unwrap_or_else(|e| {
                    panic!("CHURN_PROFILE must be none or a chaos profile: {e}")
                })),
            };
        Self {
            secs,
            warmup: number("CHURN_WARMUP_SECS").unwrap_or(if secs >= 1200 {
                secs / 4
            } else {
                secs / 2
            }),
            sample: number("CHURN_SAMPLE_SECS").unwrap_or((secs / 60).clamp(5, 60)),
            seed: number("CHURN_SEED").unwrap_or(DEFAULT_SEED),
            profile,
        }
    }
}

impl std::fmt::Display for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CHURN_SECS={} CHURN_WARMUP_SECS={} CHURN_SAMPLE_SECS={} CHURN_SEED={} CHURN_PROFILE={}",
            self.secs,
            self.warmup,
            self.sample,
            self.seed,
            self.profile
                .map_or_else(|| "none".to_owned(), |p| p.to_string())
        )
    }
}

/// One reading of the process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at_secs: u64,
    rss_kib: u64,
    fds: u64,
    reconciles: u64,
    writes: u64,
    /// The server had written enough events to fill its history twice over: its memory is at
    /// its steady size.
    history_full: bool,
}

/// Resident set size of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status")
        .expect("the churn soak reads /proc/self/status: run it on Linux");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("/proc/self/status has a VmRSS line in kB")
}

/// Open file descriptors of this process.
fn open_fds() -> u64 {
    let dir = std::fs::read_dir("/proc/self/fd")
        .expect("the churn soak lists /proc/self/fd: run it on Linux");
    dir.count() as u64
}

fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// The smallest value: the descriptors a process holds between transient connections.
fn floor(values: &mut [u64]) -> u64 {
    values.iter().copied().min().unwrap_or(0)
}

/// Growth in percent from `reduce` of the first `window` samples to `reduce` of the last ones.
fn growth(
    samples: &[Sample],
    window: usize,
    field: impl Fn(&Sample) -> u64,
    reduce: fn(&mut [u64]) -> u64,
) -> (u64, u64, f64) {
    let window = window.clamp(1, samples.len());
    let mut first: Vec<u64> = samples[..window].iter().map(&field).collect();
    let mut last: Vec<u64> = samples[samples.len() - window..]
        .iter()
        .map(&field)
        .collect();
    let (first, last) = (reduce(&mut first), reduce(&mut last));
    let percent = (last as f64 - first as f64) * 100.0 / first.max(1) as f64;
    (first, last, percent)
}

/// The most descriptors the judged part may end on at its floor: `first_floor` plus
/// [`MAX_GROWTH_PERCENT`], or the warm-up's peak plus [`POOL_ALLOWANCE`] when that is higher
/// (the connection pools had already grown that far once, and keep idle connections longer at
/// times).
fn fds_ceiling(first_floor: u64, warmup_peak: u64) -> u64 {
    let by_percent = (first_floor as f64 * (1.0 + MAX_GROWTH_PERCENT / 100.0)).floor() as u64;
    by_percent.max(warmup_peak + POOL_ALLOWANCE)
}

/// `workqueue_depth` of every controller, from the manager's metrics.
fn queue_depths(metrics: &Metrics) -> Vec<(String, f64)> {
    let text = metrics.render();
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .expect("the manager's metrics parse as Prometheus text");
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == "workqueue_depth")
        .map(|s| {
            let depth = match s.value {
                Value::Gauge(v) | Value::Untyped(v) | Value::Counter(v) => v,
                _ => f64::NAN,
            };
            (s.labels.get("name").unwrap_or("?").to_owned(), depth)
        })
        .collect()
}

/// What must be true once the churn stopped and everything drained; empty when it is.
fn not_drained(server: &ApiServer, manager: &Manager) -> Vec<String> {
    let mut gaps = Vec::new();
    let cm_informer = manager.cache().informers::<ConfigMap>().unwrap().remove(0);
    let secret_informer = manager.cache().informers::<Secret>().unwrap().remove(0);
    let buffers = cm_informer
        .listener_buffers()
        .into_iter()
        .chain(secret_informer.listener_buffers());
    for buffer in buffers {
        if buffer.len != 0 {
            gaps.push(format!(
                "listener {} holds {} notifications",
                buffer.handler, buffer.len
            ));
        }
    }
    let depths = queue_depths(manager.metrics());
    for controller in ["mirror", "stamp"] {
        if !depths.iter().any(|(queue, _)| queue == controller) {
            gaps.push(format!("no workqueue_depth for {controller}: {depths:?}"));
        }
    }
    for (queue, depth) in depths {
        if depth != 0.0 {
            gaps.push(format!("queue {queue} holds {depth} keys"));
        }
    }
    let cms: Vec<ConfigMap> = server.list();
    let secrets: Vec<Secret> = server.list();
    let cache_cms = workload::versions::<ConfigMap>(cm_informer.indexer().list());
    if cache_cms != workload::versions::<ConfigMap>(&cms) {
        gaps.push(format!(
            "ConfigMap cache {cache_cms:?} differs from the server"
        ));
    }
    let cache_secrets = workload::versions::<Secret>(secret_informer.indexer().list());
    if cache_secrets != workload::versions::<Secret>(&secrets) {
        gaps.push(format!(
            "Secret cache {cache_secrets:?} differs from the server"
        ));
    }
    gaps.extend(workload::unfinished(&cms, &secrets));
    gaps
}

fn reconciles(handles: &[ControllerHandle]) -> u64 {
    handles
        .iter()
        .map(|h| {
            let s = h.stats();
            s.successes() + s.errors() + s.terminal_errors() + s.requeues() + s.requeues_after()
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churn_keeps_memory_and_descriptors_flat() {
    let settings = Settings::from_env();
    assert!(
        settings.warmup < settings.secs && settings.sample > 0,
        "{settings}: the warm-up must be shorter than the churn and the interval positive"
    );
    let fds_before = open_fds();
    let mut builder = ApiServer::builder().history_limit(HISTORY_LIMIT);
    if let Some(profile) = settings.profile {
        builder = builder.chaos(ChaosConfig {
            seed: settings.seed,
            profile,
        });
    }
    let server = builder
        .start()
        .await
        .unwrap_or_else(|e| panic!("{settings}: server: {e}"));
    let stop = CancellationToken::new();
    let manager = Arc::new(
        Manager::builder(server.client().expect("client"))
            .handle_signals(false)
            .shutdown_token(stop.clone())
            .leader_election(LeaderElectionConfig::new(NS, "churn-leader"))
            .cache_sync_timeout(Duration::from_secs(120))
            .build(),
    );
    let mirror =
        Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .owns(Watch::of::<Secret>())
            .named("mirror")
            .max_concurrent_reconciles(2)
            .build(reconciler_fn(
                |req: Request, ctx: Context<ConfigMap>| async move {
                    workload::mirror(&req, &ctx).await
                },
            ))
            .expect("mirror controller");
    let stamp = Controller::new(&manager)
        .for_(Watch::of::<Secret>())
        .named("stamp")
        .max_concurrent_reconciles(2)
        .build(reconciler_fn(
            |_req: Request, ctx: Context<Secret>| async move { workload::stamp(&ctx).await },
        ))
        .expect("stamp controller");
    let handles = [mirror, stamp];
    let running = {
        let manager = Arc::clone(&manager);
        tokio::spawn(async move { manager.start().await })
    };

    let started = Instant::now();
    let churn_end = started + Duration::from_secs(settings.secs);
    let writes = Arc::new(AtomicU64::new(0));
    let driver = {
        let cms: Api<ConfigMap> = Api::namespaced(server.client().expect("client"), NS);
        let writes = Arc::clone(&writes);
        let mut rng = fastrand::Rng::with_seed(settings.seed);
        tokio::spawn(async move {
            let mut sent = 0_u64;
            while Instant::now() < churn_end {
                sent += 1;
                if workload::random_write(&cms, &mut rng, NAMES).await {
                    writes.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(rng.u64(5..25))).await;
            }
            sent
        })
    };

    let mut samples = Vec::new();
    let mut ticks = tokio::time::interval_at(
        started + Duration::from_secs(settings.sample),
        Duration::from_secs(settings.sample),
    );
    loop {
        let at = ticks.tick().await;
        let sample = Sample {
            at_secs: (at - started).as_secs(),
            rss_kib: rss_kib(),
            fds: open_fds(),
            reconciles: reconciles(&handles),
            writes: writes.load(Ordering::Relaxed),
            history_full: server.resource_version() > 2 * HISTORY_LIMIT as u64,
        };
        println!(
            "churn sample t={}s rss={} KiB fds={} reconciles={} driver writes ok={}",
            sample.at_secs, sample.rss_kib, sample.fds, sample.reconciles, sample.writes
        );
        samples.push(sample);
        assert!(
            !running.is_finished(),
            "{settings}: the manager stopped during the churn: {:?}",
            running.await
        );
        if at + Duration::from_secs(settings.sample) > churn_end {
            break;
        }
    }
    let sent = driver
        .await
        .unwrap_or_else(|e| panic!("{settings}: driver: {e}"));
    let quiet_from = Instant::now();

    // The churn stopped: buffers and queues drain, caches settle on the server's state.
    server.stop_chaos();
    let faults = server.chaos_stats();
    let deadline = Instant::now() + DRAIN_LIMIT;
    let mut gaps = not_drained(&server, &manager);
    while !gaps.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        gaps = not_drained(&server, &manager);
    }
    let drained_after = Instant::now() - quiet_from;
    stop.cancel();
    let stopped = running.await;

    let judged: Vec<Sample> = samples
        .iter()
        .copied()
        .filter(|s| s.at_secs > settings.warmup && s.history_full)
        .collect();
    assert!(
        judged.len() >= 3,
        "{settings}: only {} samples after the warm-up; lengthen CHURN_SECS or shorten CHURN_SAMPLE_SECS",
        judged.len()
    );
    let rss_window = (judged.len() / 3).clamp(1, 5);
    let (rss_first, rss_last, rss_growth) = growth(&judged, rss_window, |s| s.rss_kib, median);
    // Descriptors swing by ten within one sampling interval under chaos (connections opened
    // in bursts): their floors are taken over each half of the judged samples, so that a few
    // samples caught in one burst do not make a floor.
    let (fds_first, fds_last, fds_growth) = growth(&judged, judged.len() / 2, |s| s.fds, floor);
    let warmup_fds_peak = samples
        .iter()
        .take_while(|s| s.at_secs < judged[0].at_secs)
        .map(|s| s.fds)
        .max()
        .unwrap_or(0);
    let fds_ceiling = fds_ceiling(fds_first, warmup_fds_peak);
    let (rss_min, rss_max) = judged.iter().fold((u64::MAX, 0), |(lo, hi), s| {
        (lo.min(s.rss_kib), hi.max(s.rss_kib))
    });
    let (fds_min, fds_max) = judged
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), s| (lo.min(s.fds), hi.max(s.fds)));
    let total_reconciles = reconciles(&handles);
    let ok = writes.load(Ordering::Relaxed);
    println!(
        "churn {settings}: {ok}/{sent} driver writes ok, {total_reconciles} reconciles; \
         {} samples judged (t={}..{} s): RSS {rss_first} → {rss_last} KiB ({rss_growth:+.2} %, \
         min {rss_min}, max {rss_max}), fds {fds_first} → {fds_last} ({fds_growth:+.2} %, min \
         {fds_min}, max {fds_max}, ceiling {fds_ceiling}); drained {drained_after:?} after the churn; faults injected: {faults}",
        judged.len(),
        judged[0].at_secs,
        judged[judged.len() - 1].at_secs,
    );

    assert!(
        gaps.is_empty(),
        "{settings}: not drained {DRAIN_LIMIT:?} after the churn: {gaps:#?}"
    );
    assert!(
        stopped.as_ref().is_ok_and(Result::is_ok),
        "{settings}: the manager did not stop cleanly: {stopped:?}"
    );
    for handle in &handles {
        assert_eq!(
            handle.stats().panics(),
            0,
            "{settings}: {} panicked",
            handle.name()
        );
    }
    assert!(
        ok > 0 && total_reconciles > 0,
        "{settings}: the run did too little: {ok} writes, {total_reconciles} reconciles"
    );
    assert!(
        rss_growth <= MAX_GROWTH_PERCENT,
        "{settings}: RSS grew {rss_growth:.2} % after the warm-up ({rss_first} → {rss_last} KiB): {judged:?}"
    );
    assert!(
        fds_last <= fds_ceiling,
        "{settings}: open descriptors grew {fds_growth:.2} % after the warm-up ({fds_first} → \
         {fds_last}), past both {MAX_GROWTH_PERCENT} % and the warm-up's peak of \
         {warmup_fds_peak} plus {POOL_ALLOWANCE}: {judged:?}"
    );

    // Stopped and dropped, the manager and the server close every descriptor they opened.
    drop(handles);
    drop(manager);
    server.shutdown().await;
    let limit = fds_before + SHUTDOWN_SLACK;
    let deadline = Instant::now() + SHUTDOWN_CLOSE_LIMIT;
    let mut fds_after = open_fds();
    while fds_after > limit && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        fds_after = open_fds();
    }
    println!(
        "churn {settings}: descriptors {fds_before} before the start, {fds_after} after the shutdown"
    );
    assert!(
        fds_after <= limit,
        "{settings}: {fds_after} descriptors open {SHUTDOWN_CLOSE_LIMIT:?} after the shutdown, \
         {fds_before} before the start: descriptors leaked"
    );
}
