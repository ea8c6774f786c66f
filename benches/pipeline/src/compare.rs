//! `compare`: decode, ours and kube-runtime interleaved (decode, A, B per round), each
//! measurement in a fresh process, then the controller's end-to-end latency at 5 000 and
//! 20 000 events/s (10 000 pods and 5 s of events each, fewer if the comparison is smaller),
//! each followed by a bare watch of the same events (the latency floor); prints the medians
//! and every figure of the goals table: ours ÷ kube-runtime, ours ÷ decode, CPU per object ÷
//! decode CPU per object, memory, relist peak, e2e p99.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::controller::StageFigures;
use crate::measure::in_fresh_process;
use crate::suite::PeerFigures;

/// The decode limit as the `decode` subcommand prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecodeLine {
    /// Pods per second from list pages.
    pub list_objects_per_s: f64,
    /// CPU microseconds per pod decoded from list pages.
    pub list_cpu_per_object_us: f64,
    /// Events per second from watch lines.
    pub watch_events_per_s: f64,
    /// CPU microseconds per watch event decoded.
    pub watch_cpu_per_event_us: f64,
    /// Pods per second decoded into a map that keeps them all (decode-and-keep).
    #[serde(default)]
    pub list_kept_objects_per_s: f64,
    /// Watch events per second decoded and applied to that map.
    #[serde(default)]
    pub watch_kept_events_per_s: f64,
}

impl DecodeLine {
    /// The median of each figure over `lines`.
    pub fn median_of(lines: &[DecodeLine]) -> Self {
        let of = |figure: fn(&DecodeLine) -> f64| median(lines.iter().map(figure));
        Self {
            list_objects_per_s: of(|d| d.list_objects_per_s),
            list_cpu_per_object_us: of(|d| d.list_cpu_per_object_us),
            watch_events_per_s: of(|d| d.watch_events_per_s),
            watch_cpu_per_event_us: of(|d| d.watch_cpu_per_event_us),
            list_kept_objects_per_s: of(|d| d.list_kept_objects_per_s),
            watch_kept_events_per_s: of(|d| d.watch_kept_events_per_s),
        }
    }
}

/// The end-to-end latency as the `controller` subcommand prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyLine {
    /// Events per second.
    pub rate: u32,
    /// Latency samples.
    pub samples: usize,
    /// Median, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// The same events read by a bare watch (`watch-floor`, run right after): median, µs.
    #[serde(default)]
    pub floor_p50_us: f64,
    /// The bare watch's 99th percentile, microseconds.
    #[serde(default)]
    pub floor_p99_us: f64,
}

/// The paced rates at which the end-to-end latency is measured, and seconds of events each.
const E2E_RATES: [u32; 2] = [5_000, 20_000];
const E2E_SECONDS: usize = 5;
/// Pods listed before the paced events.
const E2E_OBJECTS: usize = 10_000;

/// Pods listed and events sent by the end-to-end runs at `rate`: [`E2E_OBJECTS`] and
/// [`E2E_SECONDS`] of events, or the comparison's own sizes where those are smaller (a smoke
/// run of a few hundred objects stays small end to end).
fn e2e_size(rate: u32, objects: usize, events: usize) -> (usize, usize) {
    (
        E2E_OBJECTS.min(objects),
        (rate as usize * E2E_SECONDS).min(events),
    )
}

/// Medians over the rounds, and the ratios the goals are stated in.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Rounds run.
    pub rounds: usize,
    /// Median decode limit.
    pub decode: DecodeLine,
    /// Median figures of ours.
    pub ours: PeerFigures,
    /// Median figures of kube-runtime.
    pub kube_runtime: PeerFigures,
    /// inf_sync ours ÷ kube-runtime.
    pub sync_vs_kube: f64,
    /// inf_watch ours ÷ kube-runtime.
    pub watch_vs_kube: f64,
    /// inf_stream ours ÷ kube-runtime.
    pub stream_vs_kube: f64,
    /// Bytes per pod ours ÷ kube-runtime.
    pub bytes_per_object_vs_kube: f64,
    /// Bytes per pod ours stripped ÷ kube-runtime unstripped.
    pub stripped_vs_kube_unstripped: f64,
    /// As `bytes_per_object_vs_kube`, both after `malloc_trim`.
    pub trimmed_bytes_per_object_vs_kube: f64,
    /// As `stripped_vs_kube_unstripped`, both after `malloc_trim`.
    pub trimmed_stripped_vs_kube_unstripped: f64,
    /// inf_sync ours ÷ list decode limit.
    pub sync_vs_decode: f64,
    /// inf_watch ours ÷ event decode limit.
    pub watch_vs_decode: f64,
    /// inf_stream ours ÷ list decode limit.
    pub stream_vs_decode: f64,
    /// Our client's CPU seconds per pod during inf_sync ÷ the decode limit's CPU per pod.
    pub sync_cpu_vs_decode: f64,
    /// The same for kube-runtime.
    pub kube_sync_cpu_vs_decode: f64,
    /// Median end-to-end latency at each paced rate.
    pub e2e: Vec<LatencyLine>,
}

/// Runs `rounds` rounds and compares the medians.
pub fn run(objects: usize, events: usize, rounds: usize) -> Result<Comparison> {
    let rounds = rounds.max(1);
    let size = [
        "--objects".to_owned(),
        objects.to_string(),
        "--events".to_owned(),
        events.to_string(),
    ];
    let command = |name: &str| [vec![name.to_owned()], size.to_vec()].concat();
    let (mut decodes, mut ours, mut kube) = (Vec::new(), Vec::new(), Vec::new());
    let mut latencies: Vec<Vec<LatencyLine>> = vec![Vec::new(); E2E_RATES.len()];
    for round in 0..rounds {
        eprintln!("compare: round {} of {rounds}", round + 1);
        decodes.push(in_fresh_process::<DecodeLine>(&command("decode"))?);
        ours.push(in_fresh_process::<PeerFigures>(&command("informer"))?);
        kube.push(in_fresh_process::<PeerFigures>(&command("kube-runtime"))?);
        for (rate, runs) in E2E_RATES.iter().zip(&mut latencies) {
            let (e2e_objects, e2e_events) = e2e_size(*rate, objects, events);
            let paced = |name: &str| {
                vec![
                    name.to_owned(),
                    "--objects".to_owned(),
                    e2e_objects.to_string(),
                    "--events".to_owned(),
                    e2e_events.to_string(),
                    "--rate".to_owned(),
                    rate.to_string(),
                ]
            };
            let mut line = in_fresh_process::<LatencyLine>(&paced("controller"))?;
            let floor = in_fresh_process::<StageFigures>(&paced("watch-floor"))?;
            (line.floor_p50_us, line.floor_p99_us) = (floor.p50_us, floor.p99_us);
            runs.push(line);
        }
    }
    let decode = DecodeLine::median_of(&decodes);
    let e2e = E2E_RATES
        .iter()
        .zip(&latencies)
        .map(|(&rate, runs)| LatencyLine {
            rate,
            samples: median(runs.iter().map(|r| r.samples as f64)) as usize,
            p50_us: median(runs.iter().map(|r| r.p50_us)),
            p99_us: median(runs.iter().map(|r| r.p99_us)),
            floor_p50_us: median(runs.iter().map(|r| r.floor_p50_us)),
            floor_p99_us: median(runs.iter().map(|r| r.floor_p99_us)),
        })
        .collect();
    let (ours, kube_runtime) = (median_figures(&ours), median_figures(&kube));
    Ok(Comparison {
        rounds,
        sync_vs_kube: ours.inf_sync_objects_per_s / kube_runtime.inf_sync_objects_per_s,
        watch_vs_kube: ours.inf_watch_events_per_s / kube_runtime.inf_watch_events_per_s,
        stream_vs_kube: ours.inf_stream_objects_per_s / kube_runtime.inf_stream_objects_per_s,
        bytes_per_object_vs_kube: ours.bytes_per_object / kube_runtime.bytes_per_object,
        stripped_vs_kube_unstripped: ours.bytes_per_object_stripped / kube_runtime.bytes_per_object,
        trimmed_bytes_per_object_vs_kube: ours.bytes_per_object_trimmed
            / kube_runtime.bytes_per_object_trimmed,
        trimmed_stripped_vs_kube_unstripped: ours.bytes_per_object_stripped_trimmed
            / kube_runtime.bytes_per_object_trimmed,
        sync_vs_decode: ours.inf_sync_objects_per_s / decode.list_objects_per_s,
        watch_vs_decode: ours.inf_watch_events_per_s / decode.watch_events_per_s,
        stream_vs_decode: ours.inf_stream_objects_per_s / decode.list_objects_per_s,
        sync_cpu_vs_decode: ours.inf_sync_cpu_per_object_us / decode.list_cpu_per_object_us,
        kube_sync_cpu_vs_decode: kube_runtime.inf_sync_cpu_per_object_us
            / decode.list_cpu_per_object_us,
        e2e,
        decode,
        ours,
        kube_runtime,
    })
}

/// The median of each figure over the runs.
pub fn median_figures(runs: &[PeerFigures]) -> PeerFigures {
    let of = |figure: fn(&PeerFigures) -> f64| median(runs.iter().map(figure));
    PeerFigures {
        peer: runs.first().map(|run| run.peer.clone()).unwrap_or_default(),
        inf_sync_objects_per_s: of(|r| r.inf_sync_objects_per_s),
        inf_sync_cpu_per_object_us: of(|r| r.inf_sync_cpu_per_object_us),
        inf_watch_events_per_s: of(|r| r.inf_watch_events_per_s),
        inf_watch_cpu_per_event_us: of(|r| r.inf_watch_cpu_per_event_us),
        inf_watch_server_cpu_per_event_us: of(|r| r.inf_watch_server_cpu_per_event_us),
        inf_stream_objects_per_s: of(|r| r.inf_stream_objects_per_s),
        inf_stream_cpu_per_object_us: of(|r| r.inf_stream_cpu_per_object_us),
        inf_relist_peak_ratio: of(|r| r.inf_relist_peak_ratio),
        rss_synced_bytes: of(|r| r.rss_synced_bytes as f64) as u64,
        bytes_per_object: of(|r| r.bytes_per_object),
        bytes_per_object_stripped: of(|r| r.bytes_per_object_stripped),
        bytes_per_object_trimmed: of(|r| r.bytes_per_object_trimmed),
        bytes_per_object_stripped_trimmed: of(|r| r.bytes_per_object_stripped_trimmed),
        bytes_per_object_lean: of(|r| r.bytes_per_object_lean),
        inf_sync_lean_objects_per_s: of(|r| r.inf_sync_lean_objects_per_s),
        complete: runs.iter().all(|run| run.complete),
    }
}

/// The median (mean of the middle two for an even count); 0 when empty.
pub fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Cores kept busy by `cpu_per_event_us` microseconds of CPU per event at `events_per_s`.
fn cores(cpu_per_event_us: f64, events_per_s: f64) -> f64 {
    cpu_per_event_us * events_per_s / 1e6
}

/// The goals table: each figure, ours beside its goal.
pub fn describe(c: &Comparison) -> String {
    let mut rows = vec![
        format!("median of {} rounds", c.rounds),
        "| figure | ours | goal |".to_owned(),
        "|---|---|---|".to_owned(),
    ];
    let mut row = |figure: &str, value: String, goal: &str| {
        rows.push(format!("| {figure} | {value} | {goal} |"));
    };
    row(
        "inf_sync ÷ kube-runtime / ÷ decode",
        format!("{:.2}× / {:.2}×", c.sync_vs_kube, c.sync_vs_decode),
        "≥ 1.5× / ≥ 0.8×",
    );
    row(
        "inf_watch ÷ kube-runtime / ÷ decode",
        format!("{:.2}× / {:.2}×", c.watch_vs_kube, c.watch_vs_decode),
        "≥ 1.5× / ≥ 0.8×",
    );
    row(
        "inf_stream ÷ kube-runtime / ÷ decode",
        format!("{:.2}× / {:.2}×", c.stream_vs_kube, c.stream_vs_decode),
        "≥ 1.5× / ≥ 0.8×",
    );
    row(
        "decode-and-keep ÷ decode, one thread (list / watch); ours ÷ decode-and-keep (sync / watch)",
        format!(
            "{:.2}× / {:.2}×; {:.2}× / {:.2}×",
            c.decode.list_kept_objects_per_s / c.decode.list_objects_per_s,
            c.decode.watch_kept_events_per_s / c.decode.watch_events_per_s,
            c.ours.inf_sync_objects_per_s / c.decode.list_kept_objects_per_s,
            c.ours.inf_watch_events_per_s / c.decode.watch_kept_events_per_s,
        ),
        "—",
    );
    row(
        "client CPU per object ÷ decode CPU per object (kube-runtime)",
        format!(
            "{:.2}× ({:.1} µs ÷ {:.1} µs; kube-runtime {:.2}×)",
            c.sync_cpu_vs_decode,
            c.ours.inf_sync_cpu_per_object_us,
            c.decode.list_cpu_per_object_us,
            c.kube_sync_cpu_vs_decode
        ),
        "≤ 1.3×",
    );
    row(
        "watch: client CPU per event ÷ decode CPU per event (kube-runtime); cores busy, client + server",
        format!(
            "{:.2}× ({:.1} µs ÷ {:.1} µs; kube-runtime {:.2}×); {:.2} + {:.2} (kube-runtime {:.2} + {:.2})",
            c.ours.inf_watch_cpu_per_event_us / c.decode.watch_cpu_per_event_us,
            c.ours.inf_watch_cpu_per_event_us,
            c.decode.watch_cpu_per_event_us,
            c.kube_runtime.inf_watch_cpu_per_event_us / c.decode.watch_cpu_per_event_us,
            cores(
                c.ours.inf_watch_cpu_per_event_us,
                c.ours.inf_watch_events_per_s
            ),
            cores(
                c.ours.inf_watch_server_cpu_per_event_us,
                c.ours.inf_watch_events_per_s
            ),
            cores(
                c.kube_runtime.inf_watch_cpu_per_event_us,
                c.kube_runtime.inf_watch_events_per_s
            ),
            cores(
                c.kube_runtime.inf_watch_server_cpu_per_event_us,
                c.kube_runtime.inf_watch_events_per_s
            ),
        ),
        "—",
    );
    row(
        "bytes per cached pod ÷ kube-runtime",
        format!(
            "{:.2}× ({:.0} ÷ {:.0} B)",
            c.bytes_per_object_vs_kube, c.ours.bytes_per_object, c.kube_runtime.bytes_per_object
        ),
        "≤ 0.9×",
    );
    row(
        "stripped ÷ kube-runtime unstripped",
        format!(
            "{:.2}× ({:.0} B)",
            c.stripped_vs_kube_unstripped, c.ours.bytes_per_object_stripped
        ),
        "≤ 0.6×",
    );
    row(
        "lean projection type ÷ kube-runtime unstripped (sync pods/s)",
        format!(
            "{:.2}× ({:.0} B; {:.0} pods/s)",
            c.ours.bytes_per_object_lean / c.kube_runtime.bytes_per_object,
            c.ours.bytes_per_object_lean,
            c.ours.inf_sync_lean_objects_per_s
        ),
        "—",
    );
    row(
        "relist peak RSS ÷ steady (kube-runtime)",
        format!(
            "{:.2}× ({:.2}×)",
            c.ours.inf_relist_peak_ratio, c.kube_runtime.inf_relist_peak_ratio
        ),
        "≤ 1.1×",
    );
    let e2e: Vec<String> = c
        .e2e
        .iter()
        .map(|l| format!("{:.2} ms at {}/s", l.p99_us / 1e3, l.rate))
        .collect();
    row("e2e p99", e2e.join(" / "), "≤ 0.5 ms / ≤ 1 ms");
    let floor: Vec<String> = c
        .e2e
        .iter()
        .map(|l| {
            format!(
                "p50 {:.2} ms (e2e {:.2}), p99 {:.2} ms at {}/s",
                l.floor_p50_us / 1e3,
                l.p50_us / 1e3,
                l.floor_p99_us / 1e3,
                l.rate
            )
        })
        .collect();
    row(
        "a bare watch of the same events (the floor)",
        floor.join(" / "),
        "—",
    );
    rows.push(format!(
        "pods/s: decode {:.0}, ours sync {:.0} stream {:.0}, kube-runtime sync {:.0} stream {:.0}; events/s: decode {:.0}, ours {:.0}, kube-runtime {:.0}",
        c.decode.list_objects_per_s,
        c.ours.inf_sync_objects_per_s,
        c.ours.inf_stream_objects_per_s,
        c.kube_runtime.inf_sync_objects_per_s,
        c.kube_runtime.inf_stream_objects_per_s,
        c.decode.watch_events_per_s,
        c.ours.inf_watch_events_per_s,
        c.kube_runtime.inf_watch_events_per_s,
    ));
    rows.join("\n")
}
