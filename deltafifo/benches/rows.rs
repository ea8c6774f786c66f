//! One run of one fifo workload per process, printed as one JSON line, the same shape of
//! measurement as client-go's harness, to run interleaved with it (`benches/queue-sitting.sh`
//! at the repository root): `cargo bench -p kube-rt-deltafifo --bench rows -- df_2a`.
//! A failed check panics, so the process fails and prints no figures.

mod workloads;

use workloads::{OBJECTS, UPDATES};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(scenario) = args.first().cloned() else {
        eprintln!("usage: rows <df_1|df_2a|df_2b>");
        return;
    };
    let rt = workloads::runtime();
    let (elapsed, ops) = match scenario.as_str() {
        "df_1" => (workloads::df_1(&rt, &workloads::listed()), OBJECTS),
        "df_2a" => {
            let (cache, updates) = (workloads::filled_cache(), workloads::updates());
            (workloads::df_2a(&rt, &cache, &updates), UPDATES)
        }
        "df_2b" => {
            let (cache, updates) = (workloads::filled_cache(), workloads::updates());
            (workloads::df_2b(&rt, &cache, &updates), UPDATES)
        }
        other => panic!("unknown workload {other}"),
    };
    let ms = elapsed.as_secs_f64() * 1e3;
    println!(
        "{{\"scenario\":\"{scenario}\",\"key\":\"object_key\",\"ms\":{ms:.3},\"ops\":{ops},\"ops_per_s\":{:.0},\"ok\":true}}",
        ops as f64 / elapsed.as_secs_f64()
    );
}
