//! One run of one fifo workload per process, printed as one JSON line, the same shape of
//! measurement as client-go's harness, to run interleaved with it (`benches/queue-sitting.sh`
//! at the repository root): `cargo bench -p kube-rt-deltafifo --bench rows -- df_2a`.
//! A failed check panics, so the process fails and prints no figures.
//!
//! `df_1`, `df_2a` and `df_2b` run a `DeltaFifo` popped one key at a time; with `_in_order` an
//! `InOrderFifo` popped one item at a time; with `_batch` (a delta fifo) or `_batch_in_order`
//! batches of up to 1 000 (see `workloads/queues.rs`).

mod workloads;

use workloads::queues::{self, BATCH, Fifo};
use workloads::{OBJECTS, UPDATES};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(scenario) = args.first().cloned() else {
        eprintln!("usage: rows <df_1|df_2a|df_2b>[_in_order|_batch|_batch_in_order]");
        return;
    };
    let (base, kind) = match scenario.strip_suffix("_in_order") {
        Some(base) => (base, Fifo::InOrder),
        None => (scenario.as_str(), Fifo::Deltas),
    };
    let (base, max) = match base.strip_suffix("_batch") {
        Some(base) => (base, BATCH),
        None => (base, 1),
    };
    let queued = matches!(kind, Fifo::InOrder) || max > 1;
    let rt = workloads::runtime();
    let (elapsed, ops) = match (base, queued) {
        ("df_1", false) => (workloads::df_1(&rt, &workloads::listed()), OBJECTS),
        ("df_1", true) => (queues::df_1(&rt, kind, &workloads::listed(), max), OBJECTS),
        ("df_2a" | "df_2b", _) => {
            let (cache, updates) = (workloads::filled_cache(), workloads::updates());
            let elapsed = match (base, queued) {
                ("df_2a", false) => workloads::df_2a(&rt, &cache, &updates),
                ("df_2a", true) => queues::df_2a(&rt, kind, &cache, &updates, max),
                (_, false) => workloads::df_2b(&rt, &cache, &updates),
                (_, true) => queues::df_2b(&rt, kind, &cache, &updates, max),
            };
            (elapsed, UPDATES)
        }
        (other, _) => panic!("unknown workload {other}"),
    };
    let ms = elapsed.as_secs_f64() * 1e3;
    let fifo = match kind {
        Fifo::Deltas => "deltas",
        Fifo::InOrder => "in_order",
    };
    println!(
        "{{\"scenario\":\"{scenario}\",\"key\":\"object_key\",\"fifo\":\"{fifo}\",\"batch\":{max},\"ms\":{ms:.3},\"ops\":{ops},\"ops_per_s\":{:.0},\"ok\":true}}",
        ops as f64 / elapsed.as_secs_f64()
    );
}
