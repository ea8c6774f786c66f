//! `compare`: decode, ours and kube-runtime interleaved (decode, A, B per round), each
//! measurement in a fresh process; prints the medians and the ratios ours/kube-runtime and
//! ours/decode.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::measure::in_fresh_process;
use crate::suite::PeerFigures;

/// The decode limit as the `decode` subcommand prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecodeLine {
    /// Pods per second from list pages.
    pub list_objects_per_s: f64,
    /// Events per second from watch lines.
    pub watch_events_per_s: f64,
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
}

/// Runs `rounds` rounds and compares the medians.
pub fn run(objects: usize, events: usize, rounds: usize) -> Result<Comparison> {
    let size = [
        "--objects".to_owned(),
        objects.to_string(),
        "--events".to_owned(),
        events.to_string(),
    ];
    let command = |name: &str| [vec![name.to_owned()], size.to_vec()].concat();
    let (mut decodes, mut ours, mut kube) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds.max(1) {
        eprintln!("compare: round {} of {}", round + 1, rounds.max(1));
        decodes.push(in_fresh_process::<DecodeLine>(&command("decode"))?);
        ours.push(in_fresh_process::<PeerFigures>(&command("informer"))?);
        kube.push(in_fresh_process::<PeerFigures>(&command("kube-runtime"))?);
    }
    let decode = DecodeLine {
        list_objects_per_s: median(decodes.iter().map(|d| d.list_objects_per_s)),
        watch_events_per_s: median(decodes.iter().map(|d| d.watch_events_per_s)),
    };
    let (ours, kube_runtime) = (median_figures(&ours), median_figures(&kube));
    Ok(Comparison {
        rounds: rounds.max(1),
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
        decode,
        ours,
        kube_runtime,
    })
}

/// The median of each figure over the runs.
fn median_figures(runs: &[PeerFigures]) -> PeerFigures {
    let of = |figure: fn(&PeerFigures) -> f64| median(runs.iter().map(figure));
    PeerFigures {
        peer: runs.first().map(|run| run.peer.clone()).unwrap_or_default(),
        inf_sync_objects_per_s: of(|r| r.inf_sync_objects_per_s),
        inf_watch_events_per_s: of(|r| r.inf_watch_events_per_s),
        inf_stream_objects_per_s: of(|r| r.inf_stream_objects_per_s),
        inf_relist_peak_ratio: of(|r| r.inf_relist_peak_ratio),
        rss_synced_bytes: of(|r| r.rss_synced_bytes as f64) as u64,
        bytes_per_object: of(|r| r.bytes_per_object),
        bytes_per_object_stripped: of(|r| r.bytes_per_object_stripped),
        bytes_per_object_trimmed: of(|r| r.bytes_per_object_trimmed),
        bytes_per_object_stripped_trimmed: of(|r| r.bytes_per_object_stripped_trimmed),
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

/// One human line for the comparison.
pub fn describe(c: &Comparison) -> String {
    format!(
        "median of {} rounds: ours/kube-runtime sync {:.2}×, watch {:.2}×, stream {:.2}×, bytes/pod {:.2}×, stripped/kube unstripped {:.2}×; ours/decode sync {:.2}×, watch {:.2}×, stream {:.2}×; relist peak ours {:.2}× kube {:.2}×",
        c.rounds,
        c.sync_vs_kube,
        c.watch_vs_kube,
        c.stream_vs_kube,
        c.bytes_per_object_vs_kube,
        c.stripped_vs_kube_unstripped,
        c.sync_vs_decode,
        c.watch_vs_decode,
        c.stream_vs_decode,
        c.ours.inf_relist_peak_ratio,
        c.kube_runtime.inf_relist_peak_ratio,
    )
}
