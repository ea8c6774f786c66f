//! Workqueue benchmarks `wq_a` … `wq_d`: the workloads client-go's work queue is measured on, with the same sizes,
//! and `wq_a_priority`: `wq_a` on the priority queue (every add at the normal priority), next to the plain one.
//!
//! Items are the keys `ns-{i % 100}/obj-{i}` as `Arc<str>` (a shared immutable string, like a
//! Go string), all built before timing; each timed run moves its own pre-built copies into the
//! queue. `wq_a` … `wq_c` also run with the keys as `&'static str` (no reference count, like a
//! Go string) and as `indexer::ObjectKey` (what controllers queue). Async workloads run on a
//! 2-thread tokio runtime. Throughput is reported per element
//! (adds or cycles, as in the table).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use kube_rt_workqueue::{
    PriorityQueue, Queue, RateLimiter, RateLimitingQueue, default_controller_rate_limiter,
};
use tokio::runtime::Runtime;

type Key = Arc<str>;

const N: usize = 1_000_000;

fn key(i: usize) -> Key {
    Arc::from(format!("ns-{}/obj-{}", i % 100, i))
}

fn runtime() -> Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

/// Runs `run` on fresh copies of `keys` (copied outside the timing) `iters` times and returns
/// the total time `run` reports.
fn timed<K: Clone>(iters: u64, keys: &[K], mut run: impl FnMut(Vec<K>) -> Duration) -> Duration {
    (0..iters).map(|_| run(keys.to_vec())).sum()
}

fn workqueue_benches(c: &mut Criterion) {
    let rt = runtime();
    let distinct: Vec<Key> = (0..N).map(key).collect();
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

    // wq_d0: the default controller rate limiter alone: when(key(i)); forget(key(i)).
    group.bench_function("wq_d0", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let limiter = default_controller_rate_limiter::<Key>();
                total += rt.block_on(async {
                    let start = Instant::now();
                    for key in &distinct {
                        std::hint::black_box(limiter.when(key));
                        limiter.forget(key);
                    }
                    start.elapsed()
                });
            }
            total
        });
    });

    // wq_d: rate-limiting queue with that limiter: add_rate_limited(key(i)); forget(key(i));
    // time the caller loop only.
    group.bench_function("wq_d", |b| {
        b.iter_custom(|iters| {
            timed(iters, &distinct, |keys| {
                rt.block_on(async {
                    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
                    let caller = tokio::spawn({
                        let queue = queue.clone();
                        let distinct = distinct.clone();
                        async move {
                            let start = Instant::now();
                            for (key, same) in keys.into_iter().zip(&distinct) {
                                queue.add_rate_limited(key);
                                queue.forget(same);
                            }
                            start.elapsed()
                        }
                    });
                    let elapsed = caller.await.unwrap_or_default();
                    queue.shut_down();
                    elapsed
                })
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
    // wq_a: one thread, 1M distinct keys: add; get; done in turn.
    group.bench_function(format!("wq_a{suffix}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, distinct, |keys| {
                rt.block_on(async {
                    let queue = Queue::new();
                    let mut processed = 0;
                    let start = Instant::now();
                    for key in keys {
                        queue.add(key);
                        if let Some(item) = queue.get().await {
                            queue.done(&item);
                            processed += 1;
                        }
                    }
                    let elapsed = start.elapsed();
                    assert_eq!(processed, N);
                    elapsed
                })
            })
        });
    });

    // wq_a_priority: wq_a on the priority queue (the rate-limiting queue a controller uses by
    // default), every add at the normal priority.
    group.bench_function(format!("wq_a_priority{suffix}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, distinct, |keys| {
                rt.block_on(async {
                    let queue = PriorityQueue::new(default_controller_rate_limiter());
                    let mut processed = 0;
                    let start = Instant::now();
                    for key in keys {
                        queue.add(key);
                        if let Some(item) = queue.get().await {
                            queue.done(&item);
                            processed += 1;
                        }
                    }
                    let elapsed = start.elapsed();
                    assert_eq!(processed, N);
                    queue.shut_down();
                    elapsed
                })
            })
        });
    });

    // wq_a2: add all 1M keys, then 1M × get + done.
    group.bench_function(format!("wq_a2{suffix}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, distinct, |keys| {
                rt.block_on(async {
                    let queue = Queue::new();
                    let start = Instant::now();
                    for key in keys {
                        queue.add(key);
                    }
                    for _ in 0..N {
                        if let Some(item) = queue.get().await {
                            queue.done(&item);
                        }
                    }
                    let elapsed = start.elapsed();
                    assert!(queue.is_empty());
                    elapsed
                })
            })
        });
    });

    // wq_b: 1M adds of key(i % 10_000), then get + done until empty (exactly 10k gets).
    let ten_k: Vec<K> = (0..N).map(|i| distinct[i % 10_000].clone()).collect();
    group.bench_function(format!("wq_b{suffix}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, &ten_k, |keys| {
                rt.block_on(async {
                    let queue = Queue::new();
                    let start = Instant::now();
                    for key in keys {
                        queue.add(key);
                    }
                    let mut gets = 0;
                    while !queue.is_empty() {
                        if let Some(item) = queue.get().await {
                            queue.done(&item);
                            gets += 1;
                        }
                    }
                    let elapsed = start.elapsed();
                    assert_eq!(gets, 10_000);
                    elapsed
                })
            })
        });
    });

    // wq_c: 4 workers loop get/done; one producer adds key(i % 100_000) for i in 0..1M, then
    // shuts down with drain; stop when all workers exit.
    let hundred_k: Vec<K> = (0..N).map(|i| distinct[i % 100_000].clone()).collect();
    group.bench_function(format!("wq_c{suffix}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, &hundred_k, |keys| {
                rt.block_on(async {
                    let queue: Queue<K> = Queue::new();
                    let processed = Arc::new(AtomicUsize::new(0));
                    let start = Instant::now();
                    let workers: Vec<_> = (0..4)
                        .map(|_| {
                            let queue = queue.clone();
                            let processed = Arc::clone(&processed);
                            tokio::spawn(async move {
                                let mut count = 0;
                                while let Some(item) = queue.get().await {
                                    queue.done(&item);
                                    count += 1;
                                }
                                processed.fetch_add(count, Ordering::Relaxed);
                            })
                        })
                        .collect();
                    let producer = tokio::spawn({
                        let queue = queue.clone();
                        async move {
                            for key in keys {
                                queue.add(key);
                            }
                            queue.shut_down_with_drain().await;
                        }
                    });
                    let _ = producer.await;
                    for worker in workers {
                        let _ = worker.await;
                    }
                    let elapsed = start.elapsed();
                    assert!(processed.load(Ordering::Relaxed) >= 100_000);
                    assert!(queue.is_empty());
                    elapsed
                })
            })
        });
    });
}

criterion_group!(benches, workqueue_benches);
criterion_main!(benches);
