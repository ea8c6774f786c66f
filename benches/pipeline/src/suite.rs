//! The figures of one peer (`informer` or `kube-runtime` subcommand): three runs, each in a
//! fresh process: paged list + watch + relist; streaming list; paged list with managedFields
//! stripped.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::fixtures::DEFAULT_NAMESPACES;
use crate::measure::{RunFigures, RunOptions, in_fresh_process, run_args};

/// One peer's figures, named after the workloads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerFigures {
    /// `ours` or `kube-runtime`.
    pub peer: String,
    /// inf_sync: pods per second until synced (paged list).
    pub inf_sync_objects_per_s: f64,
    /// inf_sync: CPU microseconds the measuring process used per pod until synced.
    pub inf_sync_cpu_per_object_us: f64,
    /// inf_watch: events per second until the last is in the cache.
    pub inf_watch_events_per_s: f64,
    /// inf_watch: CPU microseconds the measuring process used per event.
    pub inf_watch_cpu_per_event_us: f64,
    /// inf_watch: CPU microseconds the server process used per event (sending it).
    pub inf_watch_server_cpu_per_event_us: f64,
    /// inf_stream: pods per second until synced (streaming list).
    pub inf_stream_objects_per_s: f64,
    /// inf_stream: CPU microseconds the measuring process used per pod until synced.
    pub inf_stream_cpu_per_object_us: f64,
    /// inf_relist: peak RSS during the relist ÷ RSS before it.
    pub inf_relist_peak_ratio: f64,
    /// RSS once synced (paged list), bytes.
    pub rss_synced_bytes: u64,
    /// Bytes per cached pod (paged list).
    pub bytes_per_object: f64,
    /// Bytes per cached pod with managedFields stripped.
    pub bytes_per_object_stripped: f64,
    /// Bytes per cached pod after `malloc_trim` (live data, without freed buffers).
    pub bytes_per_object_trimmed: f64,
    /// Bytes per cached pod, stripped, after `malloc_trim`.
    pub bytes_per_object_stripped_trimmed: f64,
    /// Bytes per cached pod of a user's lean projection type (ours only; 0 for kube-runtime).
    pub bytes_per_object_lean: f64,
    /// inf_sync of the lean projection type, pods per second (ours only).
    pub inf_sync_lean_objects_per_s: f64,
    /// Whether every pod and event arrived in every run.
    pub complete: bool,
}

/// Runs the three measurements of `peer` (`ours` or `kube-runtime`).
pub fn run(peer: &str, objects: usize, events: usize) -> Result<PeerFigures> {
    let base = RunOptions {
        objects,
        events,
        stream: false,
        strip_managed_fields: false,
        compact_objects: false,
        relist: true,
        page_size: None,
        namespaces: DEFAULT_NAMESPACES,
        per_namespace: false,
        fifo: None,
        pop_batch: None,
        readers: 0,
    };
    let main: RunFigures = in_fresh_process(&run_args(peer, &base))?;
    let stream: RunFigures = in_fresh_process(&run_args(
        peer,
        &RunOptions {
            events: 0,
            stream: true,
            relist: false,
            ..base
        },
    ))?;
    let stripped: RunFigures = in_fresh_process(&run_args(
        peer,
        &RunOptions {
            events: 0,
            strip_managed_fields: true,
            relist: false,
            ..base
        },
    ))?;
    let lean: Option<RunFigures> = if peer == "ours" {
        Some(in_fresh_process(&run_args(
            "ours-lean",
            &RunOptions {
                events: 0,
                relist: false,
                ..base
            },
        ))?)
    } else {
        None
    };
    let complete = [&main, &stream, &stripped]
        .into_iter()
        .chain(&lean)
        .all(|run| run.objects_synced == objects)
        && (events == 0 || main.objects_after_watch.is_some());
    let per_event = |seconds: Option<f64>| seconds.unwrap_or(0.0) * 1e6 / events.max(1) as f64;
    Ok(PeerFigures {
        peer: main.peer.clone(),
        inf_sync_objects_per_s: main.sync_objects_per_s,
        inf_sync_cpu_per_object_us: main.sync_cpu_s * 1e6 / objects as f64,
        inf_watch_events_per_s: main.watch_events_per_s.unwrap_or(0.0),
        inf_watch_cpu_per_event_us: per_event(main.watch_cpu_s),
        inf_watch_server_cpu_per_event_us: per_event(main.watch_server_cpu_s),
        inf_stream_objects_per_s: stream.sync_objects_per_s,
        inf_stream_cpu_per_object_us: stream.sync_cpu_s * 1e6 / objects as f64,
        inf_relist_peak_ratio: main.relist_peak_ratio.unwrap_or(0.0),
        rss_synced_bytes: main.rss_synced_bytes,
        bytes_per_object: main.bytes_per_object,
        bytes_per_object_stripped: stripped.bytes_per_object,
        bytes_per_object_trimmed: main.bytes_per_object_trimmed,
        bytes_per_object_stripped_trimmed: stripped.bytes_per_object_trimmed,
        bytes_per_object_lean: lean.as_ref().map_or(0.0, |run| run.bytes_per_object),
        inf_sync_lean_objects_per_s: lean.as_ref().map_or(0.0, |run| run.sync_objects_per_s),
        complete,
    })
}

/// One human line for a peer's figures.
pub fn describe(figures: &PeerFigures) -> String {
    format!(
        "{}: sync {:.0} pods/s ({:.1} µs CPU/pod), watch {:.0} events/s ({:.1} µs CPU/event; server {:.1}), stream {:.0} pods/s, relist peak {:.2}× RSS, {:.0} B/pod ({:.0} stripped; after malloc_trim {:.0}, {:.0} stripped), RSS synced {:.1} MiB",
        figures.peer,
        figures.inf_sync_objects_per_s,
        figures.inf_sync_cpu_per_object_us,
        figures.inf_watch_events_per_s,
        figures.inf_watch_cpu_per_event_us,
        figures.inf_watch_server_cpu_per_event_us,
        figures.inf_stream_objects_per_s,
        figures.inf_relist_peak_ratio,
        figures.bytes_per_object,
        figures.bytes_per_object_stripped,
        figures.bytes_per_object_trimmed,
        figures.bytes_per_object_stripped_trimmed,
        figures.rss_synced_bytes as f64 / (1024.0 * 1024.0),
    )
}
