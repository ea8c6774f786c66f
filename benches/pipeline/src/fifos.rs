//! `fifos`: our informer's inf_sync, inf_watch and inf_relist on each fifo, popping batches of
//! up to 1 000 items and one item at a time, without cache readers and (with `--readers N`)
//! with N tasks listing the cache during the watch, interleaved (every configuration once per
//! round, each in a fresh process); prints the medians and the ratios of batches to single
//! pops. With `--compact`, the informer of compact Pods (`informer-compact`'s) instead.

use anyhow::{Result, ensure};
use serde::Serialize;

use crate::compare::median;
use crate::fixtures::DEFAULT_NAMESPACES;
use crate::measure::{FifoName, RunFigures, RunOptions, in_fresh_process, run_args};

/// client-go's batch size, the informer's default.
const BATCH: usize = 1_000;

/// The fifo and pop batch of each configuration, in the order each round runs them (for each
/// number of readers).
const FIFO_BATCHES: [(FifoName, usize); 4] = [
    (FifoName::InOrder, BATCH),
    (FifoName::InOrder, 1),
    (FifoName::Deltas, BATCH),
    (FifoName::Deltas, 1),
];

/// One configuration: a fifo, its pop batch and the cache readers during the watch.
#[derive(Debug, Clone, Copy)]
struct Configuration {
    fifo: FifoName,
    pop_batch: usize,
    readers: usize,
}

/// Every configuration: the four fifo and batch pairs without readers, then with `readers`
/// (if any).
fn configurations(readers: usize) -> Vec<Configuration> {
    let counts: &[usize] = if readers == 0 { &[0] } else { &[0, readers] };
    counts
        .iter()
        .flat_map(|&readers| {
            FIFO_BATCHES
                .iter()
                .map(move |&(fifo, pop_batch)| Configuration {
                    fifo,
                    pop_batch,
                    readers,
                })
        })
        .collect()
}

/// One configuration's figures over the rounds.
#[derive(Debug, Serialize)]
pub struct FifoRow {
    /// The fifo.
    pub fifo: FifoName,
    /// The most items per pop.
    pub pop_batch: usize,
    /// Tasks listing the whole cache during the watch.
    pub readers: usize,
    /// inf_sync of every round, pods per second.
    pub sync_objects_per_s: Vec<f64>,
    /// inf_watch of every round, events per second.
    pub watch_events_per_s: Vec<f64>,
    /// inf_relist of every round: peak RSS during the relist ÷ RSS before it.
    pub relist_peak_ratio: Vec<f64>,
    /// Median inf_sync, pods per second.
    pub median_sync_objects_per_s: f64,
    /// Median inf_watch, events per second.
    pub median_watch_events_per_s: f64,
    /// Median inf_relist peak ratio.
    pub median_relist_peak_ratio: f64,
    /// The readers' whole-cache lists per second during the watch, every round (with readers).
    pub watch_reads_per_s: Vec<f64>,
    /// Median of `watch_reads_per_s` (0 without readers).
    pub median_watch_reads_per_s: f64,
}

/// Batches of 1 000 ÷ single pops, for one fifo and number of readers.
#[derive(Debug, Serialize)]
pub struct BatchRatio {
    /// The fifo.
    pub fifo: FifoName,
    /// Tasks listing the cache during the watch.
    pub readers: usize,
    /// inf_sync.
    pub sync: f64,
    /// inf_watch.
    pub watch: f64,
    /// The readers' lists per second during the watch (with readers).
    pub reads: Option<f64>,
}

/// Every configuration's figures and the ratios of batches to single pops.
#[derive(Debug, Serialize)]
pub struct FifoFigures {
    /// The informer measured: `ours` (typed) or `ours-compact`.
    pub peer: String,
    /// Rounds run.
    pub rounds: usize,
    /// Pods in the initial list.
    pub objects: usize,
    /// Watch events after the sync.
    pub events: usize,
    /// One row per configuration, in [`configurations`] order.
    pub rows: Vec<FifoRow>,
    /// Batches ÷ single pops, per fifo and number of readers.
    pub batch_ratios: Vec<BatchRatio>,
    /// Batches of 1 000 without readers, in-order fifo ÷ delta fifo: inf_sync.
    pub in_order_vs_deltas_sync_ratio: f64,
    /// Batches of 1 000 without readers, in-order fifo ÷ delta fifo: inf_watch.
    pub in_order_vs_deltas_watch_ratio: f64,
}

/// Runs every configuration once per round, each in a fresh process (paged list, the watch
/// events, then a forced relist), of our typed informer or, with `compact`, of our informer of
/// compact Pods.
pub fn run(
    objects: usize,
    events: usize,
    rounds: usize,
    readers: usize,
    compact: bool,
) -> Result<FifoFigures> {
    let peer = if compact { "ours-compact" } else { "ours" };
    ensure!(events > 0, "fifos measures the watch too: give it events");
    let configurations = configurations(readers);
    let mut runs: Vec<Vec<RunFigures>> = configurations.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds.max(1) {
        for (configuration, done) in configurations.iter().zip(runs.iter_mut()) {
            let Configuration {
                fifo,
                pop_batch,
                readers,
            } = *configuration;
            eprintln!(
                "round {round}: {} fifo, pop batch {pop_batch}, {readers} readers",
                fifo.arg()
            );
            let options = RunOptions {
                objects,
                events,
                stream: false,
                strip_managed_fields: false,
                compact_objects: false,
                relist: true,
                page_size: None,
                namespaces: DEFAULT_NAMESPACES,
                per_namespace: false,
                fifo: Some(fifo),
                pop_batch: Some(pop_batch),
                readers,
            };
            let figures: RunFigures = in_fresh_process(&run_args(peer, &options))?;
            ensure!(
                figures.objects_synced == objects
                    && figures.objects_after_watch.is_some()
                    && figures.watch_events_per_s.is_some()
                    && figures.relist_peak_ratio.is_some()
                    && (readers == 0 || figures.watch_reads_per_s.is_some()),
                "{} fifo, pop batch {pop_batch}, {readers} readers: the run did not cache every \
                 pod and event",
                fifo.arg()
            );
            done.push(figures);
        }
    }
    let rows: Vec<FifoRow> = configurations
        .iter()
        .zip(runs)
        .map(|(configuration, runs)| {
            let sync: Vec<f64> = runs.iter().map(|run| run.sync_objects_per_s).collect();
            let watch: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.watch_events_per_s)
                .collect();
            let relist: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.relist_peak_ratio)
                .collect();
            let reads: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.watch_reads_per_s)
                .collect();
            FifoRow {
                fifo: configuration.fifo,
                pop_batch: configuration.pop_batch,
                readers: configuration.readers,
                median_watch_reads_per_s: if reads.is_empty() {
                    0.0
                } else {
                    median(reads.iter().copied())
                },
                watch_reads_per_s: reads,
                median_sync_objects_per_s: median(sync.iter().copied()),
                median_watch_events_per_s: median(watch.iter().copied()),
                median_relist_peak_ratio: median(relist.iter().copied()),
                relist_peak_ratio: relist,
                sync_objects_per_s: sync,
                watch_events_per_s: watch,
            }
        })
        .collect();
    let sync = |a: &FifoRow, b: &FifoRow| a.median_sync_objects_per_s / b.median_sync_objects_per_s;
    let watch =
        |a: &FifoRow, b: &FifoRow| a.median_watch_events_per_s / b.median_watch_events_per_s;
    // Rows come in pairs: batches, then single pops, of one fifo and number of readers.
    let batch_ratios = rows
        .chunks_exact(2)
        .map(|pair| BatchRatio {
            fifo: pair[0].fifo,
            readers: pair[0].readers,
            sync: sync(&pair[0], &pair[1]),
            watch: watch(&pair[0], &pair[1]),
            reads: (pair[0].readers > 0)
                .then(|| pair[0].median_watch_reads_per_s / pair[1].median_watch_reads_per_s),
        })
        .collect();
    let (in_order, deltas) = (&rows[0], &rows[2]);
    Ok(FifoFigures {
        peer: peer.to_owned(),
        rounds: rounds.max(1),
        objects,
        events,
        in_order_vs_deltas_sync_ratio: sync(in_order, deltas),
        in_order_vs_deltas_watch_ratio: watch(in_order, deltas),
        batch_ratios,
        rows,
    })
}

/// The medians as a table, and the ratios.
pub fn describe(figures: &FifoFigures) -> String {
    let mut lines = vec![
        format!(
            "{}: {} pods, {} events; medians of {} rounds",
            figures.peer, figures.objects, figures.events, figures.rounds
        ),
        "| fifo | pop batch | readers | inf_sync pods/s | inf_watch events/s | reader lists/s | relist peak ÷ steady RSS | runs (sync / watch) |".to_owned(),
        "|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    let each = |values: &[f64]| {
        values
            .iter()
            .map(|value| format!("{value:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for row in &figures.rows {
        lines.push(format!(
            "| {} | {} | {} | {:.0} | {:.0} | {:.1} | {:.2}× | {} / {} |",
            row.fifo.arg(),
            row.pop_batch,
            row.readers,
            row.median_sync_objects_per_s,
            row.median_watch_events_per_s,
            row.median_watch_reads_per_s,
            row.median_relist_peak_ratio,
            each(&row.sync_objects_per_s),
            each(&row.watch_events_per_s)
        ));
    }
    for ratio in &figures.batch_ratios {
        let reads = ratio
            .reads
            .map(|reads| format!(", reader lists {reads:.2}×"))
            .unwrap_or_default();
        lines.push(format!(
            "batches ÷ single pops, {} fifo, {} readers: sync {:.2}×, watch {:.2}×{reads}",
            ratio.fifo.arg(),
            ratio.readers,
            ratio.sync,
            ratio.watch
        ));
    }
    lines.push(format!(
        "in-order ÷ deltas (batches): sync {:.2}×, watch {:.2}×",
        figures.in_order_vs_deltas_sync_ratio, figures.in_order_vs_deltas_watch_ratio
    ));
    lines.join("\n")
}
