//! `pipeline-bench`: the informer pipeline against kube-runtime and the decode limit, the
//! metadata-only caches, the cost of admission webhooks per write, a sharded controller's
//! throughput and memory over 1, 2 and 4 shard processes, and a failover's time to the new
//! leader's first reconcile with a warm and a cold standby.
//!
//! Every subcommand prints one JSON line of figures, then one human line. Memory figures come
//! from `/proc/self/status` of a process that measures nothing else; the server runs in a child
//! process of its own. See `docs/benchmarks.md`.

/// With `--features mimalloc`, every peer runs on mimalloc (the same allocator for all).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod admission;
mod admission_server;
mod codecs;
mod compare;
mod controller;
mod cpu;
mod decode;
mod failover;
mod fifos;
mod fixtures;
mod fresh_memory;
mod kube_runtime;
mod latency_floor;
mod lean;
mod measure;
mod memory;
mod metadata;
mod metadata_peers;
mod ours;
mod ours_compact;
mod peers;
mod priority;
mod readers;
mod scaling;
mod served;
mod server;
mod shards;
mod storage_compare;
mod storage_cpu;
mod suite;

use anyhow::Result;
use clap::{Parser, Subcommand};
use serde::Serialize;

use crate::measure::{RunOptions, runtime};

#[derive(Debug, Parser)]
#[command(about = "Benchmarks of the informer pipeline against kube-runtime and the decode limit")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// Workload size shared by most subcommands.
#[derive(Debug, Clone, Copy, clap::Args)]
struct Size {
    /// Pods in the initial list.
    #[arg(long, default_value_t = 100_000)]
    objects: usize,
    /// Watch events after the sync.
    #[arg(long, default_value_t = 100_000)]
    events: usize,
}

/// The paced workload of `e2e_latency` and its floor.
#[derive(Debug, Clone, Copy, clap::Args)]
struct Paced {
    /// Pods in the server's fixture (listed by the controller before the events).
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    /// Events to send.
    #[arg(long, default_value_t = 25_000)]
    events: usize,
    /// Events per second.
    #[arg(long, default_value_t = 5_000)]
    rate: u32,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The physical limit: serde_json decoding of the same bytes into Pods, one thread.
    Decode(Size),
    /// Our SharedIndexInformer: inf_sync, inf_watch, inf_stream, inf_relist, bytes per pod.
    Informer(Size),
    /// Our SharedIndexInformer with compact storage (`Compact<Pod>`, the default codec): the
    /// same figures.
    InformerCompact(Size),
    /// kube-runtime's watcher + reflector store: the same figures.
    KubeRuntime(Size),
    /// e2e_latency: paced events into a controller; p50/p99 to reconcile start.
    Controller {
        #[command(flatten)]
        paced: Paced,
        /// Also measure the time to the informer's handlers (a second handler on its informer).
        #[arg(long)]
        stages: bool,
    },
    /// The floor under e2e_latency: the same paced events read by a bare watch (kube's watch
    /// stream on one task, each event decoded, nothing kept); p50/p99 to the decoded event.
    WatchFloor(Paced),
    /// Admission webhooks: ConfigMap creates through the in-process apiserver-sim without and
    /// with a validating and a mutating webhook (controller-runtime's server); writes/s,
    /// latency median and p99 both ways, and the difference.
    Admission {
        /// Creates per mode per round.
        #[arg(long, default_value_t = 2_000)]
        writes: usize,
        /// Rounds (each measures both modes, alternating which goes first).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Creates in flight at once.
        #[arg(long, default_value_t = 1)]
        concurrency: usize,
    },
    /// priority_latency: a live change behind a large initial list, one worker, priority
    /// queue vs plain queue.
    Priority {
        /// Pods in the initial list.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        /// Rounds of each queue (in turns).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// failover: a new leader's first reconcile after the old one died (stopped, or killed),
    /// with a warm standby and with a cold one.
    Failover {
        /// ConfigMaps on the server.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
    },
    /// Metadata-only caches: bytes per cached pod and sync rate of our metadata informer vs
    /// our full informer and kube-runtime's metadata watcher, cluster-wide and one cache per
    /// namespace.
    Metadata {
        /// Pods in the initial list.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        /// Namespaces the pods are spread over (one cache each in the per-namespace runs).
        #[arg(long, default_value_t = 3)]
        namespaces: usize,
        /// Rounds of every configuration (in turns).
        #[arg(long, default_value_t = 1)]
        rounds: usize,
    },
    /// decode, informer and kube-runtime interleaved; median ratios.
    Compare {
        #[command(flatten)]
        size: Size,
        /// Rounds of each.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Our informer on each fifo, popping batches of up to 1 000 and one item at a time:
    /// inf_sync and inf_watch interleaved, medians and the ratios of batches to single pops.
    Fifos {
        #[command(flatten)]
        size: Size,
        /// Rounds of every configuration (in turns).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Also run every configuration with this many tasks listing the cache during the
        /// watch (0: without readers only).
        #[arg(long, default_value_t = 0)]
        readers: usize,
        /// Measure the informer of compact Pods instead of the typed one.
        #[arg(long)]
        compact: bool,
    },
    /// Initial sync of every peer (typed, compact, metadata-only, kube-runtime) at several
    /// collection sizes: pods/s, bytes and CPU per pod, as a table and SVG plots.
    Scaling {
        /// Collection sizes (pods), comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [10_000, 100_000, 300_000])]
        sizes: Vec<usize>,
        /// Watch events after each sync (served, not timed here).
        #[arg(long, default_value_t = 20_000)]
        events: usize,
        /// Rounds of every point (in turns).
        #[arg(long, default_value_t = 1)]
        rounds: usize,
        /// Where to write the plot.
        #[arg(long, default_value = "docs/scaling.svg")]
        svg: std::path::PathBuf,
        /// Where to write the memory panel alone.
        #[arg(long, default_value = "docs/memory.svg")]
        memory_svg: std::path::PathBuf,
    },
    /// What the machine charges for memory touched for the first time: each size of fresh
    /// memory written one byte per page, in turn; microseconds per page (wall and CPU).
    FreshMemory {
        /// Sizes in GiB, comma-separated, in the order to write them.
        #[arg(long, value_delimiter = ',', default_values_t = [1.0, 2.0, 4.0, 8.0])]
        gib: Vec<f64>,
    },
    /// Compact cached objects: per encoding, stored bytes per pod, encode and decode CPU,
    /// single-read latency (every read checked against typed decoding), and bytes per cached
    /// pod of typed and compact indexers in fresh processes.
    Codecs {
        /// Pods in the fixture.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        #[command(flatten)]
        tuning: codecs::Tuning,
    },
    /// One cache's memory for `codecs` (used by it).
    #[command(hide = true)]
    CodecMemory {
        /// Pods in the fixture.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        /// Compact with this encoding (typed without).
        #[arg(long, value_enum)]
        encoding: Option<codecs::EncodingName>,
        /// Keep managedFields.
        #[arg(long)]
        keep_managed_fields: bool,
        #[command(flatten)]
        tuning: codecs::Tuning,
    },
    /// Compact storage against typed storage and kube-runtime, interleaved in fresh processes:
    /// decode, informer, informer-compact and kube-runtime per round; medians and the goals
    /// of compact storage (bytes per pod, sync and watch against decode and kube-runtime,
    /// client CPU per object, relist peak).
    CompareStorage {
        #[command(flatten)]
        size: Size,
        /// Rounds of each.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// A whole controller's client CPU with the manager's caches typed and compact (each
    /// reconcile reads its primary and two more cached pods), in turns in fresh processes.
    StorageCpu {
        #[command(flatten)]
        size: Size,
        /// Rounds of each storage.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Decoded objects compact storage keeps (`Storage::recently_decoded`).
        #[arg(long, default_value_t = 0)]
        recently_decoded: usize,
    },
    /// One run of `storage-cpu` (used by it).
    #[command(hide = true)]
    StorageCpuRun {
        #[command(flatten)]
        size: Size,
        /// `typed` or `compact`.
        #[arg(long)]
        storage: String,
        /// Decoded objects compact storage keeps.
        #[arg(long, default_value_t = 0)]
        recently_decoded: usize,
    },
    /// Sharding: reconciles/s of a controller whose reconciler waits on an external call, and
    /// memory per process, for 1, 2 and 4 shard processes of one ring over the same ConfigMaps
    /// (apiserver-sim in this process); ratios to the 1-process run.
    Shards(shards::ShardsOptions),
    /// One shard process (used by `shards`).
    #[command(hide = true)]
    Shard(shards::ShardArgs),
    /// One measurement in this process (used by the others).
    #[command(hide = true)]
    Run {
        /// Which cache.
        #[arg(long, value_enum)]
        peer: peers::PeerName,
        #[command(flatten)]
        options: RunOptions,
    },
    /// The fixture server (used by the others).
    #[command(hide = true)]
    Serve {
        #[command(flatten)]
        size: Size,
        /// Namespaces the pods are spread over.
        #[arg(long, default_value_t = fixtures::DEFAULT_NAMESPACES)]
        namespaces: usize,
        /// Pace the events at this many per second, stamping their send time.
        #[arg(long)]
        rate: Option<u32>,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Decode(size) => {
            let figures = decode::run(size.objects, size.events)?;
            let human = format!(
                "decode limit: list {:.0} pods/s, watch {:.0} events/s ({:.0} through the reflector's line decoder) ({} B/pod of JSON); decoded and kept: list {:.0} pods/s, watch {:.0} events/s",
                figures.list_objects_per_s,
                figures.watch_events_per_s,
                figures.watch_line_decoder_events_per_s,
                figures.average_pod_bytes,
                figures.list_kept_objects_per_s,
                figures.watch_kept_events_per_s
            );
            print(&figures, &human)
        }
        Cmd::Informer(size) | Cmd::InformerCompact(size) | Cmd::KubeRuntime(size) => {
            let peer = match cli.command {
                Cmd::Informer(_) => "ours",
                Cmd::InformerCompact(_) => "ours-compact",
                _ => "kube-runtime",
            };
            let figures = suite::run(peer, size.objects, size.events)?;
            print(&figures, &suite::describe(&figures))
        }
        Cmd::Controller {
            paced:
                Paced {
                    objects,
                    events,
                    rate,
                },
            stages,
        } => {
            let figures = runtime()?.block_on(controller::run(objects, events, rate, stages))?;
            let mut human = format!(
                "e2e_latency at {} events/s: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs over {} reconciles",
                figures.rate, figures.p50_us, figures.p99_us, figures.max_us, figures.samples
            );
            if let Some(stage) = &figures.to_handlers {
                human.push_str(&format!(
                    "\n  to the informer's handlers (a probe, served after the controller's own): p50 {:.0} µs, p99 {:.0} µs over {} updates",
                    stage.p50_us, stage.p99_us, stage.samples
                ));
            }
            print(&figures, &human)
        }
        Cmd::WatchFloor(Paced {
            objects,
            events,
            rate,
        }) => {
            let floor = runtime()?.block_on(latency_floor::run(objects, events, rate))?;
            let human = format!(
                "a bare watch at {rate} events/s (each event decoded, nothing kept): p50 {:.0} µs, p99 {:.0} µs over {} events",
                floor.p50_us, floor.p99_us, floor.samples
            );
            print(&floor, &human)
        }
        Cmd::Admission {
            writes,
            rounds,
            concurrency,
        } => {
            let figures = runtime()?.block_on(admission::run(writes, rounds, concurrency))?;
            print(&figures, &admission::describe(&figures))
        }
        Cmd::Priority { objects, rounds } => {
            let figures = runtime()?.block_on(priority::run(objects, rounds))?;
            print(&figures, &priority::describe(&figures))
        }
        Cmd::Failover { objects } => {
            let figures = runtime()?.block_on(failover::run(objects))?;
            print(&figures, &failover::describe(&figures))
        }
        Cmd::Metadata {
            objects,
            namespaces,
            rounds,
        } => {
            let figures = metadata::run(objects, namespaces, rounds)?;
            print(&figures, &metadata::describe(&figures))
        }
        Cmd::FreshMemory { gib } => {
            let figures = fresh_memory::run(&gib)?;
            let human = figures
                .points
                .iter()
                .map(|p| {
                    format!(
                        "{:.1} GiB fresh: {:.2} µs per page ({:.2} µs CPU)",
                        p.bytes as f64 / f64::from(1u32 << 30),
                        p.wall_per_page_us,
                        p.cpu_per_page_us
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(&figures, &human)
        }
        Cmd::Scaling {
            sizes,
            events,
            rounds,
            svg,
            memory_svg,
        } => {
            let figures = scaling::run(&sizes, events, rounds, &svg, &memory_svg)?;
            print(&figures, &scaling::describe(&figures))
        }
        Cmd::Compare { size, rounds } => {
            let comparison = compare::run(size.objects, size.events, rounds)?;
            print(&comparison, &compare::describe(&comparison))
        }
        Cmd::Fifos {
            size,
            rounds,
            readers,
            compact,
        } => {
            let figures = fifos::run(size.objects, size.events, rounds, readers, compact)?;
            print(&figures, &fifos::describe(&figures))
        }
        Cmd::Codecs { objects, tuning } => {
            let figures = codecs::run(objects, tuning)?;
            print(&figures, &codecs::describe(&figures))
        }
        Cmd::CodecMemory {
            objects,
            encoding,
            keep_managed_fields,
            tuning,
        } => {
            let row = codecs::run_memory(objects, encoding, keep_managed_fields, tuning)?;
            let human = format!("{}: {:.0} B/pod", row.cache, row.bytes_per_pod);
            print(&row, &human)
        }
        Cmd::CompareStorage { size, rounds } => {
            let figures = storage_compare::run(size.objects, size.events, rounds)?;
            print(&figures, &storage_compare::describe(&figures))
        }
        Cmd::StorageCpu {
            size,
            rounds,
            recently_decoded,
        } => {
            let figures = storage_cpu::run(size.objects, size.events, rounds, recently_decoded)?;
            print(&figures, &storage_cpu::describe(&figures))
        }
        Cmd::StorageCpuRun {
            size,
            storage,
            recently_decoded,
        } => {
            anyhow::ensure!(
                storage == "typed" || storage == "compact",
                "--storage is typed or compact, not {storage}"
            );
            let run = runtime()?.block_on(storage_cpu::run_one(
                size.objects,
                size.events,
                storage == "compact",
                recently_decoded,
            ))?;
            let human = format!(
                "{}: {} reconciles, {:.2} s CPU",
                run.storage, run.reconciles, run.cpu_s
            );
            print(&run, &human)
        }
        Cmd::Shards(options) => {
            let figures = runtime()?.block_on(shards::run(options))?;
            print(&figures, &shards::describe(&figures))
        }
        Cmd::Shard(args) => shards::run_shard(args),
        Cmd::Run { peer, options } => {
            let figures = peers::run(peer, options, &runtime()?)?;
            let human = format!(
                "{} {:?}: synced {} pods at {:.0}/s",
                figures.peer, figures.options, figures.objects_synced, figures.sync_objects_per_s
            );
            print(&figures, &human)
        }
        Cmd::Serve {
            size,
            namespaces,
            rate,
        } => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(server::serve(size.objects, size.events, namespaces, rate)),
    }
}

fn print(figures: &impl Serialize, human: &str) -> Result<()> {
    println!("{}", serde_json::to_string(figures)?);
    println!("{human}");
    Ok(())
}
