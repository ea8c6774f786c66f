//! `scaling`: the initial sync of every peer at several collection sizes, each run in a fresh
//! process: pods per second, bytes per cached pod and CPU per pod, as a table and as an SVG plot
//! (cost per object should stay flat as the collection grows), and the memory panel alone as a
//! second plot. The peers: our informer typed, compact and metadata-only, and kube-runtime.

use std::path::Path;

use anyhow::{Context, Result, ensure};
use plotters::prelude::*;
use serde::Serialize;

use crate::compare::median;
use crate::fixtures::DEFAULT_NAMESPACES;
use crate::measure::{RunFigures, RunOptions, in_fresh_process, run_args};

/// The peers compared, and their colours in the plot.
const PEERS: [(&str, RGBColor); 4] = [
    ("ours", RGBColor(31, 119, 180)),
    ("ours-compact", RGBColor(44, 160, 44)),
    ("ours-metadata", RGBColor(148, 103, 189)),
    ("kube-runtime", RGBColor(214, 39, 40)),
];

/// One peer at one size (medians over the rounds).
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// `ours` or `kube-runtime`.
    pub peer: String,
    /// Pods listed.
    pub objects: usize,
    /// Pods per second until synced.
    pub sync_objects_per_s: f64,
    /// RSS once synced, bytes.
    pub rss_synced_bytes: u64,
    /// (RSS synced − RSS before) ÷ pods.
    pub bytes_per_object: f64,
    /// CPU microseconds of the measuring process per pod until synced.
    pub cpu_per_object_us: f64,
}

/// Every point, and the ratios the goals are stated in.
#[derive(Debug, Serialize)]
pub struct Scaling {
    /// Watch events of every run (after the sync, not timed here).
    pub events: usize,
    /// Rounds per point.
    pub rounds: usize,
    /// One per peer and size.
    pub points: Vec<Point>,
    /// The SVG written.
    pub svg: String,
    /// The memory panel's SVG.
    pub memory_svg: String,
}

/// Measures every size with every peer (in turns, `rounds` times) and writes the plot to `svg`
/// and its memory panel alone to `memory_svg`.
pub fn run(
    sizes: &[usize],
    events: usize,
    rounds: usize,
    svg: &Path,
    memory_svg: &Path,
) -> Result<Scaling> {
    ensure!(!sizes.is_empty(), "no sizes to measure");
    let rounds = rounds.max(1);
    let mut runs: Vec<(String, usize, RunFigures)> = Vec::new();
    for round in 0..rounds {
        for &objects in sizes {
            for (peer, _) in PEERS {
                eprintln!(
                    "scaling: round {} of {rounds}, {peer}, {objects} pods",
                    round + 1
                );
                let options = RunOptions {
                    objects,
                    events,
                    stream: false,
                    strip_managed_fields: false,
                    compact_objects: false,
                    relist: false,
                    page_size: None,
                    namespaces: DEFAULT_NAMESPACES,
                    per_namespace: false,
                    fifo: None,
                    pop_batch: None,
                    readers: 0,
                };
                let figures: RunFigures = in_fresh_process(&run_args(peer, &options))?;
                runs.push((peer.to_owned(), objects, figures));
            }
        }
    }
    let mut points = Vec::new();
    for &objects in sizes {
        for (peer, _) in PEERS {
            let of = |figure: fn(&RunFigures) -> f64| {
                median(
                    runs.iter()
                        .filter(|(p, n, _)| p == peer && *n == objects)
                        .map(|(_, _, f)| figure(f)),
                )
            };
            points.push(Point {
                peer: peer.to_owned(),
                objects,
                sync_objects_per_s: of(|f| f.sync_objects_per_s),
                rss_synced_bytes: of(|f| f.rss_synced_bytes as f64) as u64,
                bytes_per_object: of(|f| f.bytes_per_object),
                cpu_per_object_us: of(|f| f.sync_cpu_s * 1e6 / f.options.objects as f64),
            });
        }
    }
    plot(&points, svg, &PANELS)?;
    plot(&points, memory_svg, &PANELS[1..2])?;
    Ok(Scaling {
        events,
        rounds,
        points,
        svg: svg.display().to_string(),
        memory_svg: memory_svg.display().to_string(),
    })
}

/// One panel of the plot: its title, unit and figure.
struct Panel {
    title: &'static str,
    unit: &'static str,
    figure: fn(&Point) -> f64,
}

const PANELS: [Panel; 3] = [
    Panel {
        title: "initial sync",
        unit: "pods/s",
        figure: |p| p.sync_objects_per_s,
    },
    Panel {
        title: "memory per cached pod",
        unit: "bytes",
        figure: |p| p.bytes_per_object,
    },
    Panel {
        title: "CPU per pod (client process)",
        unit: "µs",
        figure: |p| p.cpu_per_object_us,
    },
];

/// Writes `panels` (of sync rate, bytes per pod, CPU per pod against the collection size, one
/// line per peer) side by side to `svg`.
fn plot(points: &[Point], svg: &Path, panels: &[Panel]) -> Result<()> {
    let (min_x, max_x) = points.iter().fold((f64::MAX, 0f64), |(lo, hi), p| {
        (lo.min(p.objects as f64), hi.max(p.objects as f64))
    });
    let (min_x, max_x) = (min_x * 0.8, max_x * 1.25);
    let width = 420 * u32::try_from(panels.len()).unwrap_or(1);
    let root = SVGBackend::new(svg, (width, 420)).into_drawing_area();
    root.fill(&WHITE)
        .with_context(|| format!("drawing {}", svg.display()))?;
    for (area, panel) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        let max_y = points.iter().map(panel.figure).fold(0f64, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(panel.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((min_x..max_x).log_scale(), 0f64..max_y.max(1.0))?;
        chart
            .configure_mesh()
            .x_desc("pods in the collection")
            .y_desc(panel.unit)
            .x_label_formatter(&|x| format!("{:.0}k", x / 1000.0))
            .draw()?;
        for (peer, color) in PEERS {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.peer == peer)
                .map(|p| (p.objects as f64, (panel.figure)(p)))
                .collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
                .label(peer)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color));
            chart.draw_series(line.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()
        .with_context(|| format!("writing {}", svg.display()))?;
    Ok(())
}

/// The table of every point and the goal's two ratios at the largest size.
pub fn describe(s: &Scaling) -> String {
    let mut rows = vec![
        "| peer | pods | sync pods/s | RSS synced MiB | bytes per pod | CPU µs per pod |"
            .to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    for p in &s.points {
        rows.push(format!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.1} |",
            p.peer,
            p.objects,
            p.sync_objects_per_s,
            p.rss_synced_bytes as f64 / (1024.0 * 1024.0),
            p.bytes_per_object,
            p.cpu_per_object_us
        ));
    }
    let rate = |peer: &str, objects: usize| {
        s.points
            .iter()
            .find(|p| p.peer == peer && p.objects == objects)
            .map_or(f64::NAN, |p| p.sync_objects_per_s)
    };
    if let (Some(small), Some(large)) = (
        s.points.iter().map(|p| p.objects).min(),
        s.points.iter().map(|p| p.objects).max(),
    ) {
        let rss = |peer: &str| {
            s.points
                .iter()
                .find(|p| p.peer == peer && p.objects == large)
                .map_or(f64::NAN, |p| p.rss_synced_bytes as f64)
        };
        rows.push(format!(
            "at {large} pods: ours ÷ kube-runtime {:.2}× (goal ≥ 1.5×), ours ÷ ours at {small} {:.2}× (goal ≥ 0.8×); compact ÷ kube-runtime: sync {:.2}×, RSS {:.2}× (typed {:.2}×); plots: {}, {}",
            rate("ours", large) / rate("kube-runtime", large),
            rate("ours", large) / rate("ours", small),
            rate("ours-compact", large) / rate("kube-runtime", large),
            rss("ours-compact") / rss("kube-runtime"),
            rss("ours") / rss("kube-runtime"),
            s.svg,
            s.memory_svg
        ));
    }
    rows.join("\n")
}
