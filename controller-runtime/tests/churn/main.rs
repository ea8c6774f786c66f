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
//!
//! With `KUBE_RT_TEST_KUBECONFIG` set the churn runs against that real cluster instead (see
//! `target.rs` and `../real/`): no simulator and no chaos (`CHURN_PROFILE` does not apply), a
//! namespace of the run's own that the manager alone caches and that is removed at the end,
//! and the cluster's garbage collector deleting the Secrets whose ConfigMap is gone (this
//! process does on a cluster without one: a bare API server).

#[path = "../real/mod.rs"]
mod real;
#[path = "../workload/mod.rs"]
mod workload;

mod measure;
mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use apiserver_sim::ChaosProfile;
use controller_runtime::{
    controller::{Context, Controller, ControllerHandle, Request, Watch, reconciler_fn},
    leader_election::LeaderElectionConfig,
    manager::Manager,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use measure::{
    MAX_GROWTH_PERCENT, POOL_ALLOWANCE, Sample, fds_ceiling, floor, growth, median, open_fds,
    queue_depths, rss_kib,
};
use target::Target;

const DEFAULT_SECS: u64 = 60;
const DEFAULT_SEED: u64 = 20_261_125;
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
/// How long the buffers, queues and caches may take to settle once the churn stopped.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
struct Settings {
    secs: u64,
    warmup: u64,
    sample: u64,
    seed: u64,
    profile: Option<ChaosProfile>,
    /// The real cluster's admin kubeconfig (`KUBE_RT_TEST_KUBECONFIG`): no simulator, no chaos.
    real: Option<std::path::PathBuf>,
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
        let real = real::named_kubeconfig();
        let profile =
            match var("CHURN_PROFILE").as_deref().map(str::trim) {
                _ if real.is_some() => None,
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
            real,
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
        )?;
        match &self.real {
            Some(path) => write!(f, " {}={}", real::KUBECONFIG_VAR, path.display()),
            None => Ok(()),
        }
    }
}

/// What must be true once the churn stopped and everything drained; empty when it is.
async fn not_drained(target: &Target, manager: &Manager) -> Vec<String> {
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
    let (cms, secrets) = match target.objects().await {
        Ok(objects) => objects,
        Err(e) => {
            gaps.push(format!("the server's objects: {e}"));
            return gaps;
        }
    };
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
    let target = match &settings.real {
        None => Target::sim(HISTORY_LIMIT, settings.profile.map(|p| (settings.seed, p))).await,
        Some(admin) => Target::real(admin).await,
    }
    .unwrap_or_else(|e| panic!("{settings}: {e}"));
    let stop = CancellationToken::new();
    let mut builder = Manager::builder(target.client().expect("client"))
        .handle_signals(false)
        .shutdown_token(stop.clone())
        .leader_election(LeaderElectionConfig::new(
            target.namespace(),
            "churn-leader",
        ))
        .cache_sync_timeout(Duration::from_secs(120));
    if target.is_real() {
        builder = builder.namespace(target.namespace());
    }
    let manager = Arc::new(builder.build());
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
        let cms: Api<ConfigMap> =
            Api::namespaced(target.client().expect("client"), target.namespace());
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
            history_full: target.steady(),
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
    let faults = target.stop_faults();
    let deadline = Instant::now() + DRAIN_LIMIT;
    let mut gaps = not_drained(&target, &manager).await;
    while !gaps.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        gaps = not_drained(&target, &manager).await;
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
    let panics: Vec<(String, u64)> = handles
        .iter()
        .map(|h| (h.name().to_owned(), h.stats().panics()))
        .collect();
    let ok = writes.load(Ordering::Relaxed);
    println!(
        "churn {settings}: {ok}/{sent} driver writes ok, {total_reconciles} reconciles; \
         {} samples judged (t={}..{} s): RSS {rss_first} → {rss_last} KiB ({rss_growth:+.2} %, \
         min {rss_min}, max {rss_max}), fds {fds_first} → {fds_last} ({fds_growth:+.2} %, min \
         {fds_min}, max {fds_max}, ceiling {fds_ceiling}); drained {drained_after:?} after the churn; {faults}",
        judged.len(),
        judged[0].at_secs,
        judged[judged.len() - 1].at_secs,
    );

    // Stopped and dropped, the manager and the server close every descriptor they opened (the
    // real cluster's run namespace is removed here, before any check can fail).
    drop(handles);
    drop(manager);
    let collected = target
        .shutdown()
        .await
        .unwrap_or_else(|e| panic!("{settings}: {e}"));
    if let Some(collected) = collected {
        println!("churn {settings}: {collected}");
    }

    assert!(
        gaps.is_empty(),
        "{settings}: not drained {DRAIN_LIMIT:?} after the churn: {gaps:#?}"
    );
    assert!(
        stopped.as_ref().is_ok_and(Result::is_ok),
        "{settings}: the manager did not stop cleanly: {stopped:?}"
    );
    for (name, panicked) in &panics {
        assert_eq!(*panicked, 0, "{settings}: {name} panicked");
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
