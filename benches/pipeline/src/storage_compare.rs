//! `compare-storage`: compact storage against typed storage and kube-runtime. Per round, each
//! in a fresh process: the decode limit, our informer (typed), our informer of compact Pods and
//! kube-runtime (each of those three runs its paged, streaming and stripped measurements); then
//! the medians and the goals of compact storage, each figure for both of our storages.

use anyhow::Result;
use serde::Serialize;

use crate::compare::{DecodeLine, median_figures};
use crate::measure::in_fresh_process;
use crate::suite::PeerFigures;

/// One of our storages against the decode limit and kube-runtime.
#[derive(Debug, Serialize)]
pub struct StorageRatios {
    /// Bytes per cached pod, `managedFields` kept, ÷ kube-runtime's.
    pub bytes_vs_kube: f64,
    /// Bytes per cached pod, `managedFields` dropped, ÷ kube-runtime's (kept).
    pub stripped_vs_kube: f64,
    /// RSS once synced ÷ kube-runtime's.
    pub rss_vs_kube: f64,
    /// inf_sync ÷ one thread's decode of the same list pages.
    pub sync_vs_decode: f64,
    /// inf_watch ÷ one thread's decode of the same watch events.
    pub watch_vs_decode: f64,
    /// inf_sync ÷ kube-runtime.
    pub sync_vs_kube: f64,
    /// inf_watch ÷ kube-runtime.
    pub watch_vs_kube: f64,
    /// Client CPU per listed pod ÷ the decode's CPU per pod.
    pub sync_cpu_vs_decode: f64,
    /// Peak RSS during a relist ÷ RSS before it.
    pub relist_peak: f64,
}

impl StorageRatios {
    fn of(ours: &PeerFigures, kube: &PeerFigures, decode: &DecodeLine) -> Self {
        Self {
            bytes_vs_kube: ours.bytes_per_object / kube.bytes_per_object,
            stripped_vs_kube: ours.bytes_per_object_stripped / kube.bytes_per_object,
            rss_vs_kube: ours.rss_synced_bytes as f64 / kube.rss_synced_bytes as f64,
            sync_vs_decode: ours.inf_sync_objects_per_s / decode.list_objects_per_s,
            watch_vs_decode: ours.inf_watch_events_per_s / decode.watch_events_per_s,
            sync_vs_kube: ours.inf_sync_objects_per_s / kube.inf_sync_objects_per_s,
            watch_vs_kube: ours.inf_watch_events_per_s / kube.inf_watch_events_per_s,
            sync_cpu_vs_decode: ours.inf_sync_cpu_per_object_us / decode.list_cpu_per_object_us,
            relist_peak: ours.inf_relist_peak_ratio,
        }
    }
}

/// Medians over the rounds, and the ratios of both storages.
#[derive(Debug, Serialize)]
pub struct StorageComparison {
    /// Rounds run.
    pub rounds: usize,
    /// Median decode limit.
    pub decode: DecodeLine,
    /// Our informer, typed storage.
    pub typed: PeerFigures,
    /// Our informer, compact storage.
    pub compact: PeerFigures,
    /// kube-runtime.
    pub kube_runtime: PeerFigures,
    /// Typed storage's ratios.
    pub typed_ratios: StorageRatios,
    /// Compact storage's ratios.
    pub compact_ratios: StorageRatios,
    /// Whether every pod and event arrived in every run of every peer.
    pub complete: bool,
}

/// Runs `rounds` rounds and compares the medians.
pub fn run(objects: usize, events: usize, rounds: usize) -> Result<StorageComparison> {
    let rounds = rounds.max(1);
    let size = [
        "--objects".to_owned(),
        objects.to_string(),
        "--events".to_owned(),
        events.to_string(),
    ];
    let command = |name: &str| [vec![name.to_owned()], size.to_vec()].concat();
    let (mut decodes, mut typed, mut compact, mut kube) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        eprintln!("compare-storage: round {} of {rounds}", round + 1);
        decodes.push(in_fresh_process::<DecodeLine>(&command("decode"))?);
        typed.push(in_fresh_process::<PeerFigures>(&command("informer"))?);
        compact.push(in_fresh_process::<PeerFigures>(&command(
            "informer-compact",
        ))?);
        kube.push(in_fresh_process::<PeerFigures>(&command("kube-runtime"))?);
    }
    let decode = DecodeLine::median_of(&decodes);
    let complete = [&typed, &compact, &kube]
        .iter()
        .all(|runs| runs.iter().all(|run| run.complete));
    let (typed, compact, kube_runtime) = (
        median_figures(&typed),
        median_figures(&compact),
        median_figures(&kube),
    );
    Ok(StorageComparison {
        rounds,
        typed_ratios: StorageRatios::of(&typed, &kube_runtime, &decode),
        compact_ratios: StorageRatios::of(&compact, &kube_runtime, &decode),
        complete,
        decode,
        typed,
        compact,
        kube_runtime,
    })
}

/// The goals table: each figure for typed and compact storage, beside compact's goal.
pub fn describe(c: &StorageComparison) -> String {
    let mut rows = vec![
        format!(
            "median of {} rounds{}",
            c.rounds,
            if c.complete { "" } else { " (INCOMPLETE)" }
        ),
        "| figure | typed | compact | goal (compact) |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    let (t, k) = (&c.typed_ratios, &c.compact_ratios);
    let mut row = |figure: &str, typed: f64, compact: f64, goal: &str| {
        rows.push(format!(
            "| {figure} | {typed:.2}× | {compact:.2}× | {goal} |"
        ));
    };
    row(
        "bytes per cached pod ÷ kube-runtime, managedFields kept",
        t.bytes_vs_kube,
        k.bytes_vs_kube,
        "≤ 0.2×",
    );
    row(
        "bytes per cached pod ÷ kube-runtime, managedFields dropped",
        t.stripped_vs_kube,
        k.stripped_vs_kube,
        "≤ 0.1×",
    );
    row(
        "RSS synced ÷ kube-runtime",
        t.rss_vs_kube,
        k.rss_vs_kube,
        "—",
    );
    row(
        "inf_sync ÷ decode",
        t.sync_vs_decode,
        k.sync_vs_decode,
        "≥ 1.5×",
    );
    row(
        "inf_watch ÷ decode",
        t.watch_vs_decode,
        k.watch_vs_decode,
        "≥ 1.2×",
    );
    row(
        "inf_sync ÷ kube-runtime",
        t.sync_vs_kube,
        k.sync_vs_kube,
        "≥ 2.5×",
    );
    row(
        "inf_watch ÷ kube-runtime",
        t.watch_vs_kube,
        k.watch_vs_kube,
        "≥ 2.5×",
    );
    row(
        "client CPU per listed pod ÷ decode CPU per pod",
        t.sync_cpu_vs_decode,
        k.sync_cpu_vs_decode,
        "≤ 0.7×",
    );
    row(
        "relist peak RSS ÷ steady",
        t.relist_peak,
        k.relist_peak,
        "≤ 1.1×",
    );
    rows.push(format!(
        "bytes/pod: typed {:.0} ({:.0} stripped), compact {:.0} ({:.0} stripped), kube-runtime {:.0}; pods/s: decode {:.0}, typed {:.0}, compact {:.0}, kube-runtime {:.0}; events/s: decode {:.0}, typed {:.0}, compact {:.0}, kube-runtime {:.0}",
        c.typed.bytes_per_object,
        c.typed.bytes_per_object_stripped,
        c.compact.bytes_per_object,
        c.compact.bytes_per_object_stripped,
        c.kube_runtime.bytes_per_object,
        c.decode.list_objects_per_s,
        c.typed.inf_sync_objects_per_s,
        c.compact.inf_sync_objects_per_s,
        c.kube_runtime.inf_sync_objects_per_s,
        c.decode.watch_events_per_s,
        c.typed.inf_watch_events_per_s,
        c.compact.inf_watch_events_per_s,
        c.kube_runtime.inf_watch_events_per_s,
    ));
    rows.join("\n")
}
