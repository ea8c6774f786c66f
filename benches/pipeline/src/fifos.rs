//! `fifos`: our informer's inf_sync, inf_watch and inf_relist on each fifo, popping batches of
//! up to 1 000 items and one item at a time, interleaved (every configuration once per round,
//! each in a fresh process); prints the medians and the ratios of batches to single pops.

use anyhow::{Result, ensure};
use serde::Serialize;

use crate::compare::median;
use crate::fixtures::DEFAULT_NAMESPACES;
use crate::measure::{FifoName, RunFigures, RunOptions, in_fresh_process, run_args};

/// client-go's batch size, the informer's default.
const BATCH: usize = 1_000;

/// The configurations, in the order each round runs them.
const CONFIGURATIONS: [(FifoName, usize); 4] = [
    (FifoName::InOrder, BATCH),
    (FifoName::InOrder, 1),
    (FifoName::Deltas, BATCH),
    (FifoName::Deltas, 1),
];

/// One configuration's figures over the rounds.
#[derive(Debug, Serialize)]
pub struct FifoRow {
    /// The fifo.
    pub fifo: FifoName,
    /// The most items per pop.
    pub pop_batch: usize,
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
}

/// Every configuration's figures and the ratios of batches to single pops.
#[derive(Debug, Serialize)]
pub struct FifoFigures {
    /// Rounds run.
    pub rounds: usize,
    /// Pods in the initial list.
    pub objects: usize,
    /// Watch events after the sync.
    pub events: usize,
    /// One row per configuration, in [`CONFIGURATIONS`] order.
    pub rows: Vec<FifoRow>,
    /// In-order fifo, batches ÷ single pops: inf_sync.
    pub in_order_batch_sync_ratio: f64,
    /// In-order fifo, batches ÷ single pops: inf_watch.
    pub in_order_batch_watch_ratio: f64,
    /// Delta fifo, batches ÷ single pops: inf_sync.
    pub deltas_batch_sync_ratio: f64,
    /// Delta fifo, batches ÷ single pops: inf_watch.
    pub deltas_batch_watch_ratio: f64,
    /// Batches of 1 000, in-order fifo ÷ delta fifo: inf_sync.
    pub in_order_vs_deltas_sync_ratio: f64,
    /// Batches of 1 000, in-order fifo ÷ delta fifo: inf_watch.
    pub in_order_vs_deltas_watch_ratio: f64,
}

/// Runs every configuration once per round, each in a fresh process (paged list, the watch
/// events, then a forced relist).
pub fn run(objects: usize, events: usize, rounds: usize) -> Result<FifoFigures> {
    ensure!(events > 0, "fifos measures the watch too: give it events");
    let mut runs: Vec<Vec<RunFigures>> = CONFIGURATIONS.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds.max(1) {
        for ((fifo, pop_batch), done) in CONFIGURATIONS.iter().zip(runs.iter_mut()) {
            eprintln!("round {round}: {} fifo, pop batch {pop_batch}", fifo.arg());
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
                fifo: Some(*fifo),
                pop_batch: Some(*pop_batch),
            };
            let figures: RunFigures = in_fresh_process(&run_args("ours", &options))?;
            ensure!(
                figures.objects_synced == objects
                    && figures.objects_after_watch.is_some()
                    && figures.watch_events_per_s.is_some()
                    && figures.relist_peak_ratio.is_some(),
                "{} fifo, pop batch {pop_batch}: the run did not cache every pod and event",
                fifo.arg()
            );
            done.push(figures);
        }
    }
    let rows: Vec<FifoRow> = CONFIGURATIONS
        .iter()
        .zip(runs)
        .map(|(&(fifo, pop_batch), runs)| {
            let sync: Vec<f64> = runs.iter().map(|run| run.sync_objects_per_s).collect();
            let watch: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.watch_events_per_s)
                .collect();
            let relist: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.relist_peak_ratio)
                .collect();
            FifoRow {
                fifo,
                pop_batch,
                median_sync_objects_per_s: median(sync.iter().copied()),
                median_watch_events_per_s: median(watch.iter().copied()),
                median_relist_peak_ratio: median(relist.iter().copied()),
                relist_peak_ratio: relist,
                sync_objects_per_s: sync,
                watch_events_per_s: watch,
            }
        })
        .collect();
    let [in_order, in_order_single, deltas, deltas_single] = [0, 1, 2, 3].map(|at| &rows[at]);
    let sync = |a: &FifoRow, b: &FifoRow| a.median_sync_objects_per_s / b.median_sync_objects_per_s;
    let watch =
        |a: &FifoRow, b: &FifoRow| a.median_watch_events_per_s / b.median_watch_events_per_s;
    Ok(FifoFigures {
        rounds: rounds.max(1),
        objects,
        events,
        in_order_batch_sync_ratio: sync(in_order, in_order_single),
        in_order_batch_watch_ratio: watch(in_order, in_order_single),
        deltas_batch_sync_ratio: sync(deltas, deltas_single),
        deltas_batch_watch_ratio: watch(deltas, deltas_single),
        in_order_vs_deltas_sync_ratio: sync(in_order, deltas),
        in_order_vs_deltas_watch_ratio: watch(in_order, deltas),
        rows,
    })
}

/// The medians as a table, and the ratios.
pub fn describe(figures: &FifoFigures) -> String {
    let mut lines = vec![
        format!(
            "{} pods, {} events; medians of {} rounds",
            figures.objects, figures.events, figures.rounds
        ),
        "| fifo | pop batch | inf_sync pods/s | inf_watch events/s | relist peak ÷ steady RSS | runs (sync / watch) |".to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
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
            "| {} | {} | {:.0} | {:.0} | {:.2}× | {} / {} |",
            row.fifo.arg(),
            row.pop_batch,
            row.median_sync_objects_per_s,
            row.median_watch_events_per_s,
            row.median_relist_peak_ratio,
            each(&row.sync_objects_per_s),
            each(&row.watch_events_per_s)
        ));
    }
    lines.push(format!(
        "batches ÷ single pops: in-order sync {:.2}×, watch {:.2}×; deltas sync {:.2}×, watch {:.2}×",
        figures.in_order_batch_sync_ratio,
        figures.in_order_batch_watch_ratio,
        figures.deltas_batch_sync_ratio,
        figures.deltas_batch_watch_ratio
    ));
    lines.push(format!(
        "in-order ÷ deltas (batches): sync {:.2}×, watch {:.2}×",
        figures.in_order_vs_deltas_sync_ratio, figures.in_order_vs_deltas_watch_ratio
    ));
    lines.join("\n")
}
