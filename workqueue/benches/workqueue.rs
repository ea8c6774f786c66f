//! Workqueue benchmarks `wq_a` … `wq_d`: the workloads client-go's work queue is measured on, with the same sizes,
//! and `wq_a_priority`: `wq_a` on the priority queue (every add at the normal priority), next to the plain one.
//!
//! Items are the keys `ns-{i % 100}/obj-{i}` as `Arc<str>` (a shared immutable string, like a
//! Go string), all built before timing; each timed run moves its own pre-built copies into the
//! queue. `wq_a` … `wq_c` also run with the keys as `&'static str` (no reference count, like a
//! Go string) and as `indexer::ObjectKey` (what controllers queue). Async workloads run on a
//! 2-thread tokio runtime. Throughput is reported per element (adds or cycles, as in the
//! table). The workloads and their checks are in `workloads/`; `rows.rs` runs one of them once
//! per process, as client-go's harness does.

mod workloads;

use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use tokio::runtime::Runtime;

use workloads::{N, WQ_B_DISTINCT, WQ_C_DISTINCT};

type Key = Arc<str>;

/// Runs `run` on fresh copies of `keys` (copied outside the timing) `iters` times and returns
/// the total time `run` reports.
fn timed<K: Clone>(iters: u64, keys: &[K], mut run: impl FnMut(Vec<K>) -> Duration) -> Duration {
    (0..iters).map(|_| run(keys.to_vec())).sum()
}

fn workqueue_benches(c: &mut Criterion) {
    let rt = workloads::runtime();
    let distinct: Vec<Key> = (0..N).map(|i| Key::from(workloads::key_text(i))).collect();
    // The same keys as `&'static str`: a Go string is a shared immutable string without a
    // reference count, and so is this; `Arc<str>` adds three atomic reference-count updates
    // per add/get/done cycle.
    let statics: Vec<&'static str> = distinct
        .iter()
        .map(|key| &*Box::leak(String::from(&**key).into_boxed_str()))
        .collect();

    let mut group = c.benchmark_group("workqueue");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements(N as u64));

    queue_benches(&mut group, &rt, "", &distinct);
    queue_benches(&mut group, &rt, "_static_str", &statics);
    // The same keys as `indexer::ObjectKey`, what controllers queue: short keys live inline,
    // so a copy costs no allocation and no reference count.
    let object_keys: Vec<indexer::ObjectKey> = distinct
        .iter()
        .map(|key| key.parse().expect("valid key"))
        .collect();
    queue_benches(&mut group, &rt, "_object_key", &object_keys);

    group.bench_function("wq_d0", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| workloads::wq_d0(&distinct)).sum());
    });
    let same = Arc::new(distinct.clone());
    group.bench_function("wq_d", |b| {
        b.iter_custom(|iters| {
            timed(iters, &distinct, |keys| {
                workloads::wq_d(&rt, keys, Arc::clone(&same))
            })
        });
    });

    group.finish();
}

/// `wq_a`, `wq_a_priority`, `wq_a2`, `wq_b` and `wq_c` with items of type `K`; `distinct[i]` is
/// `key(i)`.
fn queue_benches<K>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    suffix: &str,
    distinct: &[K],
) where
    K: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
{
    group.bench_function(format!("wq_a{suffix}"), |b| {
        b.iter_custom(|iters| timed(iters, distinct, |keys| workloads::wq_a(rt, keys)));
    });
    group.bench_function(format!("wq_a_priority{suffix}"), |b| {
        b.iter_custom(|iters| timed(iters, distinct, |keys| workloads::wq_a_priority(rt, keys)));
    });
    group.bench_function(format!("wq_a2{suffix}"), |b| {
        b.iter_custom(|iters| timed(iters, distinct, |keys| workloads::wq_a2(rt, keys)));
    });
    let ten_k: Vec<K> = (0..N)
        .map(|i| distinct[i % WQ_B_DISTINCT].clone())
        .collect();
    group.bench_function(format!("wq_b{suffix}"), |b| {
        b.iter_custom(|iters| timed(iters, &ten_k, |keys| workloads::wq_b(rt, keys)));
    });
    let hundred_k: Vec<K> = (0..N)
        .map(|i| distinct[i % WQ_C_DISTINCT].clone())
        .collect();
    group.bench_function(format!("wq_c{suffix}"), |b| {
        b.iter_custom(|iters| timed(iters, &hundred_k, |keys| workloads::wq_c(rt, keys)));
    });
}

criterion_group!(benches, workqueue_benches);
criterion_main!(benches);
