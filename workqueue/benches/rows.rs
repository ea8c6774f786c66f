//! One run of one queue workload per process, printed as one JSON line: the same shape of
//! measurement as client-go's harness (keys built before timing, one timed run, a process of its
//! own), so that the two can be run interleaved in one sitting (`benches/queue-sitting.sh` at
//! the repository root).
//!
//! ```text
//! cargo bench -p kube-rt-workqueue --bench rows -- wq_b --key object_key
//! ```
//!
//! Workloads: `wq_a`, `wq_a_priority`, `wq_a2`, `wq_b`, `wq_b_table` and `wq_b_table_ref` (the
//! floors of `wq_b` for a queue on one hash table: keys moved in, keys looked up by reference),
//! `wq_c`, `wq_d0`, `wq_d`; keys (`--key`):
//! `object_key` (default, `indexer::ObjectKey`, what controllers queue), `arc_str`,
//! `static_str`. `--threads N` runs the workload on a runtime of N worker threads instead of
//! two (one thread shows what the operations cost when no core takes a cache line from the
//! other). A failed check panics, so the process fails and prints no figures.

mod workloads;

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use workloads::{N, WQ_B_DISTINCT, WQ_C_DISTINCT};

fn main() {
    // `cargo bench` passes `--bench`; without a workload (`cargo test --benches`) it only prints usage.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(scenario) = args.first().cloned() else {
        eprintln!(
            "usage: rows <wq_a|wq_a_priority|wq_a2|wq_b|wq_b_table|wq_b_table_ref|wq_c|wq_d0|wq_d> [--key object_key|arc_str|static_str] [--threads N]"
        );
        return;
    };
    let option = |name: &str| {
        args.windows(2)
            .find(|pair| pair[0] == name)
            .map(|pair| pair[1].clone())
    };
    let key = option("--key").unwrap_or_else(|| "object_key".to_owned());
    let threads = match option("--threads").map(|t| t.parse::<usize>()) {
        None => 2,
        Some(Ok(threads)) if threads > 0 => threads,
        Some(_) => panic!("--threads takes a number of threads above zero"),
    };
    let texts: Vec<String> = (0..N).map(workloads::key_text).collect();
    let elapsed = match key.as_str() {
        "object_key" => run(
            &scenario,
            threads,
            texts
                .iter()
                .map(|text| text.parse::<indexer::ObjectKey>().expect("valid key"))
                .collect(),
        ),
        "arc_str" => run(
            &scenario,
            threads,
            texts.iter().map(|t| Arc::<str>::from(t.as_str())).collect(),
        ),
        "static_str" => run(
            &scenario,
            threads,
            texts
                .into_iter()
                .map(|t| &*Box::leak(t.into_boxed_str()))
                .collect::<Vec<&'static str>>(),
        ),
        other => panic!("unknown key type {other}"),
    };
    let ms = elapsed.as_secs_f64() * 1e3;
    println!(
        "{{\"scenario\":\"{scenario}\",\"key\":\"{key}\",\"ms\":{ms:.3},\"ops\":{N},\"ops_per_s\":{:.0},\"ok\":true}}",
        N as f64 / elapsed.as_secs_f64()
    );
}

/// Runs `scenario` once with `distinct` = `key(0..N)` on a runtime of `threads` worker threads;
/// the workload asserts its own checks.
fn run<K>(scenario: &str, threads: usize, distinct: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    let rt = workloads::runtime_with(threads);
    let cycle = |len: usize| -> Vec<K> { (0..N).map(|i| distinct[i % len].clone()).collect() };
    match scenario {
        "wq_a" => workloads::wq_a(&rt, distinct),
        "wq_a_priority" => workloads::wq_a_priority(&rt, distinct),
        "wq_a2" => workloads::wq_a2(&rt, distinct),
        "wq_b" => workloads::wq_b(&rt, cycle(WQ_B_DISTINCT)),
        "wq_b_table" => workloads::wq_b_table(cycle(WQ_B_DISTINCT), true),
        "wq_b_table_ref" => workloads::wq_b_table(cycle(WQ_B_DISTINCT), false),
        "wq_c" => workloads::wq_c(&rt, cycle(WQ_C_DISTINCT)),
        "wq_d0" => workloads::wq_d0(&distinct),
        "wq_d" => {
            let same = Arc::new(distinct.clone());
            workloads::wq_d(&rt, distinct, same)
        }
        other => panic!("unknown workload {other}"),
    }
}
