//! What the churn soak measures: the process's resident memory and open descriptors (from
//! `/proc/self`), their growth between samples, and the manager's work queue depths.

use controller_runtime::metrics::Metrics;
use prometheus_parse::{Scrape, Value};

/// How far RSS and open descriptors may grow between the start and the end of the judged part.
pub const MAX_GROWTH_PERCENT: f64 = 5.0;
/// Descriptors the churn's floor may gain over the warm-up's peak: idle connections a pool
/// keeps longer (the client's requests run with up to a handful at once).
pub const POOL_ALLOWANCE: u64 = 8;

/// One reading of the process.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since the churn started.
    pub at_secs: u64,
    /// Resident set size, KiB.
    pub rss_kib: u64,
    /// Open descriptors.
    pub fds: u64,
    /// Reconciles so far.
    pub reconciles: u64,
    /// Driver writes the server accepted so far.
    pub writes: u64,
    /// The server had written enough events to fill its history twice over: its memory is at
    /// its steady size.
    pub history_full: bool,
}

/// Resident set size of this process, in KiB.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status")
        .expect("the churn soak reads /proc/self/status: run it on Linux");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("/proc/self/status has a VmRSS line in kB")
}

/// Open file descriptors of this process.
pub fn open_fds() -> u64 {
    let dir = std::fs::read_dir("/proc/self/fd")
        .expect("the churn soak lists /proc/self/fd: run it on Linux");
    dir.count() as u64
}

/// The median (sorts `values`).
pub fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// The smallest value: the descriptors a process holds between transient connections.
pub fn floor(values: &mut [u64]) -> u64 {
    values.iter().copied().min().unwrap_or(0)
}

/// Growth in percent from `reduce` of the first `window` samples to `reduce` of the last ones.
pub fn growth(
    samples: &[Sample],
    window: usize,
    field: impl Fn(&Sample) -> u64,
    reduce: fn(&mut [u64]) -> u64,
) -> (u64, u64, f64) {
    let window = window.clamp(1, samples.len());
    let mut first: Vec<u64> = samples[..window].iter().map(&field).collect();
    let mut last: Vec<u64> = samples[samples.len() - window..]
        .iter()
        .map(&field)
        .collect();
    let (first, last) = (reduce(&mut first), reduce(&mut last));
    let percent = (last as f64 - first as f64) * 100.0 / first.max(1) as f64;
    (first, last, percent)
}

/// The most descriptors the judged part may end on at its floor: `first_floor` plus
/// [`MAX_GROWTH_PERCENT`], or the warm-up's peak plus [`POOL_ALLOWANCE`] when that is higher
/// (the connection pools had already grown that far once, and keep idle connections longer at
/// times).
pub fn fds_ceiling(first_floor: u64, warmup_peak: u64) -> u64 {
    let by_percent = (first_floor as f64 * (1.0 + MAX_GROWTH_PERCENT / 100.0)).floor() as u64;
    by_percent.max(warmup_peak + POOL_ALLOWANCE)
}

/// `workqueue_depth` of every controller, from the manager's metrics.
pub fn queue_depths(metrics: &Metrics) -> Vec<(String, f64)> {
    let text = metrics.render();
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .expect("the manager's metrics parse as Prometheus text");
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == "workqueue_depth")
        .map(|s| {
            let depth = match s.value {
                Value::Gauge(v) | Value::Untyped(v) | Value::Counter(v) => v,
                _ => f64::NAN,
            };
            (s.labels.get("name").unwrap_or("?").to_owned(), depth)
        })
        .collect()
}
