//! `pipeline-bench shards`: reconciles per second and memory per process of a sharded
//! controller run as 1, 2 and 4 shard *processes* of one ring on this machine, over the same
//! ConfigMaps in an apiserver-sim that runs in this process and serves them over HTTP.
//!
//! Each shard process is a copy of this binary (`pipeline-bench shard`, see [`child`]): a
//! sharded manager whose one controller reconciles ConfigMaps with `--workers` workers and a
//! reconciler that waits `--reconcile-ms` (an external call; it writes nothing). The
//! configurations run one after another in one sitting, each on a fresh server with the same
//! objects (see [`configuration`]); the first is the 1-process baseline the others are compared
//! with. A *round* touches every object (an annotation naming the round, written straight into
//! the store) and ends when the last shard finished reconciling the last one; its throughput is
//! objects ÷ (end of the last reconcile − the touch). The bench fails unless every round
//! reconciled every object, each exactly by the shard the ring gave it.

mod child;
mod configuration;
mod fleet;
mod status;
mod workload;

use anyhow::{Result, ensure};
use serde::Serialize;

use crate::compare::median;

pub use child::{ShardArgs, run as run_shard};
use configuration::ConfigurationRun;

/// The workload and the configurations to measure.
#[derive(Debug, Clone, clap::Args)]
pub struct ShardsOptions {
    /// ConfigMaps the shards share.
    #[arg(long, default_value_t = 4_000)]
    pub objects: usize,
    /// Bytes of data per ConfigMap (over 4 keys).
    #[arg(long, default_value_t = 2_048)]
    pub data_bytes: usize,
    /// Shard process counts, in the order measured; the first must be 1 (the baseline).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4])]
    pub shards: Vec<usize>,
    /// Reconcile workers per process (`max_concurrent_reconciles`), the same in every
    /// configuration.
    #[arg(long, default_value_t = 8)]
    pub workers: usize,
    /// Milliseconds each reconcile waits.
    #[arg(long, default_value_t = 10)]
    pub reconcile_ms: u64,
    /// Measured rounds per configuration (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
}

/// One configuration's figures and how they compare with the 1-process baseline.
#[derive(Debug, Serialize)]
pub struct ConfigurationFigures {
    /// What was measured.
    #[serde(flatten)]
    pub run: ConfigurationRun,
    /// Median over the rounds.
    pub reconciles_per_s: f64,
    /// The most the workers allow: processes × workers × 1000 ÷ reconcile milliseconds.
    pub worker_bound_per_s: f64,
    /// `reconciles_per_s` ÷ the baseline's.
    pub throughput_ratio: f64,
    /// The ratio the ring's balance allows if every process reconciled at the baseline's rate:
    /// objects ÷ the largest share (the round lasts as long as the busiest shard).
    pub balance_bound_ratio: f64,
    /// Goal: `throughput_ratio` ≥ 0.8 × processes.
    pub throughput_goal_met: bool,
    /// Mean over the processes of `VmRSS` ÷ the baseline process's.
    pub rss_ratio: f64,
    /// Mean over the processes of the RSS the objects added ÷ the baseline's.
    pub rss_growth_ratio: f64,
    /// Largest cache of a process ÷ the baseline process's cache (goal ≈ 1 ÷ processes).
    pub cache_ratio_max: f64,
}

/// The whole sitting.
#[derive(Debug, Serialize)]
pub struct ShardsFigures {
    /// The workload.
    pub objects: usize,
    /// Bytes of data per object.
    pub data_bytes: usize,
    /// Workers per process.
    pub workers: usize,
    /// Milliseconds each reconcile waits.
    pub reconcile_ms: u64,
    /// Rounds per configuration.
    pub rounds: u32,
    /// The configurations, baseline first.
    pub configurations: Vec<ConfigurationFigures>,
    /// Every round of every configuration reconciled every object, each by its shard.
    pub complete: bool,
}

/// Runs the configurations of `options` in order.
pub async fn run(options: ShardsOptions) -> Result<ShardsFigures> {
    ensure!(
        options.shards.first() == Some(&1),
        "--shards must start with 1 (the baseline)"
    );
    ensure!(
        options.shards.iter().all(|&n| n > 0),
        "shard counts are positive"
    );
    ensure!(
        options.objects > 0 && options.rounds > 0 && options.workers > 0,
        "--objects, --rounds and --workers must be positive"
    );
    let mut runs = Vec::new();
    for &shards in &options.shards {
        eprintln!("shards: measuring {shards} shard process(es)");
        runs.push(configuration::measure(&options, shards).await?);
    }
    let per_process_bound = options.workers as f64 * 1000.0 / options.reconcile_ms.max(1) as f64;
    let throughput = |run: &ConfigurationRun| median(run.rounds.iter().map(|r| r.reconciles_per_s));
    let baseline = &runs[0];
    let base_throughput = throughput(baseline);
    let base = &baseline.processes[0];
    let configurations = runs
        .iter()
        .map(|run| {
            let n = run.processes.len() as f64;
            let mean = |f: &dyn Fn(&configuration::ProcessFigures) -> f64| {
                run.processes.iter().map(f).sum::<f64>() / n
            };
            let reconciles_per_s = throughput(run);
            let throughput_ratio = reconciles_per_s / base_throughput;
            ConfigurationFigures {
                reconciles_per_s,
                worker_bound_per_s: per_process_bound * n,
                throughput_ratio,
                balance_bound_ratio: options.objects as f64
                    / run
                        .processes
                        .iter()
                        .map(|p| p.objects)
                        .max()
                        .unwrap_or(1)
                        .max(1) as f64,
                throughput_goal_met: throughput_ratio >= 0.8 * n,
                rss_ratio: mean(&|p| p.rss_mib) / base.rss_mib,
                rss_growth_ratio: mean(&|p| p.rss_growth_mib) / base.rss_growth_mib,
                cache_ratio_max: run
                    .processes
                    .iter()
                    .map(|p| p.cache_objects as f64)
                    .fold(0.0, f64::max)
                    / base.cache_objects.max(1) as f64,
                run: run.clone(),
            }
        })
        .collect();
    Ok(ShardsFigures {
        objects: options.objects,
        data_bytes: options.data_bytes,
        workers: options.workers,
        reconcile_ms: options.reconcile_ms,
        rounds: options.rounds,
        configurations,
        complete: true,
    })
}

/// The human summary: one line per configuration, then one per process.
pub fn describe(figures: &ShardsFigures) -> String {
    let mut lines = vec![format!(
        "shards: {} ConfigMaps of {} B, {} workers per process, reconcile waits {} ms, median of {} rounds",
        figures.objects, figures.data_bytes, figures.workers, figures.reconcile_ms, figures.rounds
    )];
    for config in &figures.configurations {
        let n = config.run.shards;
        let rounds: Vec<String> = config
            .run
            .rounds
            .iter()
            .map(|r| format!("{:.0}", r.reconciles_per_s))
            .collect();
        lines.push(format!(
            "{n} process(es): {:.0} reconciles/s (rounds {}; worker bound {:.0}), {:.2}× the 1-process run (goal ≥ {:.1}: {}; the ring's balance allows {:.2}×); RSS per process {:.2}×, RSS the objects added {:.2}×, largest cache {:.2}× (≈ 1/{n} = {:.2})",
            config.reconciles_per_s,
            rounds.join(" / "),
            config.worker_bound_per_s,
            config.throughput_ratio,
            0.8 * n as f64,
            if config.throughput_goal_met { "met" } else { "not met" },
            config.balance_bound_ratio,
            config.rss_ratio,
            config.rss_growth_ratio,
            config.cache_ratio_max,
            1.0 / n as f64,
        ));
        for p in &config.run.processes {
            lines.push(format!(
                "  {}{}: {} objects at {:.0}/s, {} cached, RSS {:.1} MiB (peak {:.1}, {:.1} before any object), CPU {:.0} %",
                p.shard,
                if p.leads_sharder { " (sharder)" } else { "" },
                p.objects,
                p.reconciles_per_s,
                p.cache_objects,
                p.rss_mib,
                p.peak_rss_mib,
                p.rss_empty_mib,
                p.cpu_percent,
            ));
        }
        let server_cpu: Vec<f64> = config
            .run
            .rounds
            .iter()
            .map(|r| r.server_cpu_percent)
            .collect();
        lines.push(format!(
            "  API server process: CPU {:.0} % during the rounds",
            median(server_cpu.into_iter())
        ));
    }
    lines.join("\n")
}
