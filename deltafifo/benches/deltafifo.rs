//! The fifo benchmark workloads `df_1`, `df_2a`, `df_2b`, sized as client-go's, on a
//! `DeltaFifo` popped one key at a time, on an `InOrderFifo` popped one item at a time, and on
//! both popped in batches of up to 1 000 (see `workloads/` for what each does and checks;
//! `rows.rs` runs one of them once per process).

mod workloads;

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};

use workloads::queues::{self, BATCH, Fifo};
use workloads::{OBJECTS, UPDATES};

fn bench_deltafifo(c: &mut Criterion) {
    let rt = workloads::runtime();
    let objects = workloads::listed();
    let updates = workloads::updates();
    let cache = workloads::filled_cache();

    let mut group = c.benchmark_group("deltafifo");
    group.sample_size(10);
    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.bench_function("df_1_replace_100k_then_pop_into_indexer", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| workloads::df_1(&rt, &objects))
                .sum::<Duration>()
        })
    });
    group.throughput(Throughput::Elements(UPDATES as u64));
    group.bench_function("df_2a_1m_updates_then_100k_pops", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| workloads::df_2a(&rt, &cache, &updates))
                .sum::<Duration>()
        })
    });
    group.bench_function("df_2b_1m_updates_with_concurrent_pops", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| workloads::df_2b(&rt, &cache, &updates))
                .sum::<Duration>()
        })
    });
    for (name, kind, max) in [
        ("in_order", Fifo::InOrder, 1),
        ("batch", Fifo::Deltas, BATCH),
        ("batch_in_order", Fifo::InOrder, BATCH),
    ] {
        group.throughput(Throughput::Elements(OBJECTS as u64));
        group.bench_function(format!("df_1_{name}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| queues::df_1(&rt, kind, &objects, max))
                    .sum::<Duration>()
            })
        });
        group.throughput(Throughput::Elements(UPDATES as u64));
        group.bench_function(format!("df_2a_{name}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| queues::df_2a(&rt, kind, &cache, &updates, max))
                    .sum::<Duration>()
            })
        });
        group.bench_function(format!("df_2b_{name}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| queues::df_2b(&rt, kind, &cache, &updates, max))
                    .sum::<Duration>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_deltafifo);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
