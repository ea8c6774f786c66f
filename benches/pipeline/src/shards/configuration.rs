//! One configuration of the sharding benchmark: a fresh apiserver-sim in this process, N shard
//! processes of one ring, the objects created once every shard is ready, the ring settled, then
//! the measured rounds (touch every object, wait until each was reconciled), then the memory of
//! each process. Every round is checked to have reconciled exactly the measured objects, each by
//! the shard the ring gave it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use apiserver_sim::ApiServer;
use serde::Serialize;

use crate::compare::median;
use crate::shards::ShardsOptions;
use crate::shards::fleet::{ShardProcess, ShardSettings, wait_for};
use crate::shards::status::{ShardStatus, now_us};
use crate::shards::workload::{self, Placement};
use crate::{cpu, memory};

/// How long the shards may take to hold their Leases and be given their share.
const READY_LIMIT: Duration = Duration::from_secs(90);
/// How long the sharder may take to place every object and the caches to follow.
const SETTLE_LIMIT: Duration = Duration::from_secs(180);
/// A shard is idle once no reconcile has started for this long and none runs.
const QUIET: Duration = Duration::from_millis(500);
/// How often the objects' labels are read while waiting for the ring to settle (each read copies
/// every object out of the store).
const PLACEMENT_EVERY: Duration = Duration::from_millis(250);
/// Mebibytes.
const MIB: f64 = 1024.0 * 1024.0;

/// One measured round.
#[derive(Debug, Clone, Serialize)]
pub struct RoundFigures {
    /// From the first touch until the last reconcile of the round ended, milliseconds.
    pub window_ms: f64,
    /// Measured objects ÷ the window.
    pub reconciles_per_s: f64,
    /// Reconciles in the round (the objects, plus any object reconciled twice).
    pub reconciles: u64,
    /// From the first touch until the first reconcile started, milliseconds.
    pub first_reconcile_ms: f64,
    /// For each shard, from the first touch until its last reconcile ended, milliseconds.
    pub shard_window_ms: Vec<f64>,
    /// CPU of this process (the API server) over the round, % of one core.
    pub server_cpu_percent: f64,
    /// CPU of each shard process over the round, % of one core.
    pub shard_cpu_percent: Vec<f64>,
}

/// One shard process, at the end of the configuration.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessFigures {
    /// The shard's name.
    pub shard: String,
    /// This process led the ring's sharder (which caches every object's metadata).
    pub leads_sharder: bool,
    /// Measured objects the ring gave this shard.
    pub objects: usize,
    /// Objects in its controller's cache.
    pub cache_objects: usize,
    /// `VmRSS` once ready, before any object existed, MiB.
    pub rss_empty_mib: f64,
    /// `VmRSS` after the rounds, MiB.
    pub rss_mib: f64,
    /// `VmHWM` (peak) after the rounds, MiB.
    pub peak_rss_mib: f64,
    /// `rss_mib - rss_empty_mib`: what the objects cost it.
    pub rss_growth_mib: f64,
    /// Median over the rounds of its objects ÷ its own window (touch to its last reconcile's
    /// end): the rate this process reached.
    pub reconciles_per_s: f64,
    /// Median over the rounds of its CPU, % of one core.
    pub cpu_percent: f64,
}

/// What one configuration measured.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationRun {
    /// Shard processes.
    pub shards: usize,
    /// From starting the processes until the ring was settled, seconds.
    pub settle_s: f64,
    /// The measured rounds, in order.
    pub rounds: Vec<RoundFigures>,
    /// The processes.
    pub processes: Vec<ProcessFigures>,
}

/// Measures `shards` shard processes over the workload of `options`.
pub async fn measure(options: &ShardsOptions, shards: usize) -> Result<ConfigurationRun> {
    let server = ApiServer::start().await.context("starting apiserver-sim")?;
    let dir = tempfile::tempdir()?;
    let settings = ShardSettings {
        workers: options.workers,
        reconcile_ms: options.reconcile_ms,
    };
    let started = now_us();
    let mut processes = (0..shards)
        .map(|index| {
            ShardProcess::spawn(
                dir.path(),
                &server.url(),
                &format!("shard-{index}"),
                settings,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = processes.iter().map(|p| p.name().to_owned()).collect();
    wait_for(
        &mut processes,
        READY_LIMIT,
        "every shard ready",
        |statuses| Ok(statuses.iter().all(|status| status.ready).then_some(())),
    )
    .await?;
    let empty = processes
        .iter()
        .map(|process| memory::read_of(process.pid()))
        .collect::<Result<Vec<_>>>()?;
    workload::create(&server, options.objects, options.data_bytes)?;
    let settled = settle(&server, &mut processes, &names).await?;
    ensure!(
        settled.measured_total == options.objects,
        "{} measured objects on the server, {} created",
        settled.measured_total,
        options.objects
    );
    let settle_s = (now_us() - started) as f64 / 1e6;

    let mut rounds = Vec::new();
    for round in 1..=options.rounds {
        rounds
            .push(measure_round(&server, &mut processes, &settled, options.objects, round).await?);
    }
    let after = settle(&server, &mut processes, &names).await?;
    ensure!(
        after.measured == settled.measured,
        "objects moved between shards during the rounds"
    );

    let statuses = wait_for(&mut processes, QUIET, "the final statuses", |statuses| {
        Ok(Some(statuses.to_vec()))
    })
    .await?;
    let mut figures = Vec::new();
    for (index, (process, status)) in processes.iter().zip(&statuses).enumerate() {
        let memory = memory::read_of(process.pid())?;
        let cpu: Vec<f64> = rounds.iter().map(|r| r.shard_cpu_percent[index]).collect();
        let rss_empty_mib = empty[index].rss as f64 / MIB;
        let objects = settled.measured.get(&status.shard).map_or(0, BTreeSet::len);
        let rates: Vec<f64> = rounds
            .iter()
            .map(|r| objects as f64 * 1e3 / r.shard_window_ms[index].max(1e-3))
            .collect();
        figures.push(ProcessFigures {
            shard: status.shard.clone(),
            leads_sharder: status.leads_sharder,
            objects,
            cache_objects: status.cache_objects,
            rss_empty_mib,
            rss_mib: memory.rss as f64 / MIB,
            peak_rss_mib: memory.hwm as f64 / MIB,
            rss_growth_mib: memory.rss as f64 / MIB - rss_empty_mib,
            reconciles_per_s: median(rates.into_iter()),
            cpu_percent: median(cpu.into_iter()),
        });
    }
    drop(processes);
    server.shutdown().await;
    Ok(ConfigurationRun {
        shards,
        settle_s,
        rounds,
        processes: figures,
    })
}

/// Waits until every object is where the ring wants it, every cache holds exactly its shard's
/// objects and every shard is idle; the placement then.
async fn settle(
    server: &ApiServer,
    processes: &mut [ShardProcess],
    names: &[String],
) -> Result<Placement> {
    let mut checked_at: Option<Instant> = None;
    wait_for(processes, SETTLE_LIMIT, "the ring to settle", |statuses| {
        if !statuses
            .iter()
            .all(|status| status.ready && is_idle(status))
            || checked_at.is_some_and(|at| at.elapsed() < PLACEMENT_EVERY)
        {
            return Ok(None);
        }
        checked_at = Some(Instant::now());
        let placement = workload::placement(server, names);
        let caches_follow = statuses.iter().all(|status| {
            placement.all.get(&status.shard).copied().unwrap_or(0) == status.cache_objects
        });
        Ok((placement.misplaced == 0 && caches_follow).then_some(placement))
    })
    .await
}

fn is_idle(status: &ShardStatus) -> bool {
    let quiet_us = i64::try_from(QUIET.as_micros()).unwrap_or(i64::MAX);
    status.in_flight == 0 && now_us() - status.last_start_us > quiet_us
}

/// Touches every object and waits until each was reconciled; checks that each shard reconciled
/// exactly its own objects.
async fn measure_round(
    server: &ApiServer,
    processes: &mut [ShardProcess],
    placement: &Placement,
    objects: usize,
    round: u32,
) -> Result<RoundFigures> {
    let cpu_before = processes
        .iter()
        .map(|process| cpu::of_process(process.pid()))
        .collect::<Result<Vec<_>>>()?;
    let server_cpu_before = cpu::process()?;
    let touched_at = now_us();
    let touched = workload::touch(server, round)?;
    ensure!(touched == objects, "touched {touched} of {objects} objects");
    let limit = Duration::from_secs(60) + Duration::from_millis(3 * objects as u64 * 20);
    let what = format!("every object reconciled in round {round}");
    wait_for(processes, limit, &what, |statuses| {
        let reconciled: usize = statuses.iter().map(|s| s.round(round).names.len()).sum();
        Ok((reconciled >= objects).then_some(()))
    })
    .await?;
    let detected_at = now_us();
    let cpu_after = processes
        .iter()
        .map(|process| cpu::of_process(process.pid()))
        .collect::<Result<Vec<_>>>()?;
    let server_cpu = cpu::process()? - server_cpu_before;
    // Late duplicates would show once every shard is idle again.
    let statuses = wait_for(processes, SETTLE_LIMIT, "the shards idle", |statuses| {
        Ok(statuses.iter().all(is_idle).then(|| statuses.to_vec()))
    })
    .await?;
    for status in &statuses {
        let reconciled: BTreeSet<String> = status.round(round).names.into_iter().collect();
        let expected = placement
            .measured
            .get(&status.shard)
            .cloned()
            .unwrap_or_default();
        if reconciled != expected {
            bail!(
                "round {round}: shard {} reconciled {} objects, {} of them not its own, and missed {} of its {}",
                status.shard,
                reconciled.len(),
                reconciled.difference(&expected).count(),
                expected.difference(&reconciled).count(),
                expected.len()
            );
        }
    }
    let rounds: Vec<_> = statuses.iter().map(|status| status.round(round)).collect();
    let last_end = rounds
        .iter()
        .map(|r| r.last_end_us)
        .max()
        .unwrap_or(touched_at);
    let first_start = rounds
        .iter()
        .filter(|r| r.reconciles > 0)
        .map(|r| r.first_start_us)
        .min()
        .unwrap_or(touched_at);
    let window_s = (last_end - touched_at).max(1) as f64 / 1e6;
    let detected_s = (detected_at - touched_at).max(1) as f64 / 1e6;
    let percent = |cpu: Duration| 100.0 * cpu.as_secs_f64() / detected_s;
    Ok(RoundFigures {
        window_ms: window_s * 1e3,
        reconciles_per_s: objects as f64 / window_s,
        reconciles: rounds.iter().map(|r| r.reconciles).sum(),
        first_reconcile_ms: (first_start - touched_at) as f64 / 1e3,
        shard_window_ms: rounds
            .iter()
            .map(|r| (r.last_end_us - touched_at) as f64 / 1e3)
            .collect(),
        server_cpu_percent: percent(server_cpu),
        shard_cpu_percent: cpu_before
            .iter()
            .zip(&cpu_after)
            .map(|(before, after)| percent(after.saturating_sub(*before)))
            .collect(),
    })
}
