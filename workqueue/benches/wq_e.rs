//! `wq_e`: delaying-queue throughput and lateness.
//!
//! One consumer does `get` + `done` exactly 100k times while a producer calls
//! `add_after(key(i), ((i * 7919) % 10001) µs)` for i in 0..100k, on a 2-thread tokio runtime.
//! Reports the time until all are delivered (items/s) and the lateness of each delivery
//! (time the consumer got it − intended ready time), p50 and p99, as medians over rounds.
//!
//! The producer is a tokio task that yields to the scheduler every 1000 adds. client-go's
//! producer gets the same pause for free: `AddAfter` sends to a channel of 1000 entries and
//! blocks when it is full, which lets the waiting loop run. A tokio task that never yields
//! would hold its worker for the whole loop, and the timer task it woke (parked in that
//! worker's LIFO slot, which other workers do not steal) could not run until the loop ends.
//!
//! Run with `cargo bench -p kube-rt-workqueue --bench wq_e` (prints a table; not a criterion bench,
//! since criterion measures time per iteration, not a latency distribution).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use workqueue::DelayingQueue;

type Key = Arc<str>;

const N: usize = 100_000;
const ROUNDS: usize = 15;
/// The producer yields to the scheduler after this many adds (see the module docs).
const YIELD_EVERY: usize = 1000;

fn key(i: usize) -> Key {
    Arc::from(format!("ns-{}/obj-{}", i % 100, i))
}

fn delay(i: usize) -> Duration {
    Duration::from_micros(((i * 7919) % 10_001) as u64)
}

struct Round {
    items_per_sec: f64,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

async fn round(keys: &[Key], index: &HashMap<usize, usize>) -> Round {
    let queue: DelayingQueue<Key> = DelayingQueue::new();
    let producer_keys = keys.to_vec();
    let mut ready = vec![Instant::now(); N];
    let mut delivered: Vec<(usize, Instant)> = Vec::with_capacity(N);

    let start = Instant::now();
    let consumer = tokio::spawn({
        let queue = queue.clone();
        async move {
            for _ in 0..N {
                let Some(item) = queue.get().await else { break };
                let now = Instant::now();
                delivered.push((Arc::as_ptr(&item) as *const u8 as usize, now));
                queue.done(&item);
            }
            delivered
        }
    });
    let producer = tokio::spawn({
        let queue = queue.clone();
        async move {
            for (i, key) in producer_keys.into_iter().enumerate() {
                let d = delay(i);
                ready[i] = Instant::now() + d;
                queue.add_after(key, d);
                if i % YIELD_EVERY == YIELD_EVERY - 1 {
                    tokio::task::yield_now().await;
                }
            }
            ready
        }
    });
    let ready = producer.await.unwrap_or_default();
    let delivered = consumer.await.unwrap_or_default();
    let elapsed = start.elapsed();
    queue.shut_down();
    assert_eq!(delivered.len(), N, "not every item was delivered");

    let mut lateness: Vec<Duration> = delivered
        .iter()
        .map(|(ptr, at)| {
            let i = index[ptr];
            at.saturating_duration_since(ready[i])
        })
        .collect();
    lateness.sort_unstable();
    Round {
        items_per_sec: N as f64 / elapsed.as_secs_f64(),
        p50: percentile(&lateness, 0.5),
        p99: percentile(&lateness, 0.99),
        max: percentile(&lateness, 1.0),
    }
}

fn median<T: Copy + PartialOrd>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run one round.
    let rounds = if std::env::args().any(|arg| arg == "--bench") {
        ROUNDS
    } else {
        1
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    };
    let keys: Vec<Key> = (0..N).map(key).collect();
    let index: HashMap<usize, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| (Arc::as_ptr(key) as *const u8 as usize, i))
        .collect();

    // Warm-up.
    runtime.block_on(round(&keys, &index));
    let results: Vec<Round> = (0..rounds)
        .map(|_| runtime.block_on(round(&keys, &index)))
        .collect();
    for (n, r) in results.iter().enumerate() {
        println!(
            "wq_e round {n:2}: {:.3} M items/s, lateness p50 {:?} p99 {:?} max {:?}",
            r.items_per_sec / 1e6,
            r.p50,
            r.p99,
            r.max
        );
    }
    let throughput = median(results.iter().map(|r| r.items_per_sec).collect());
    let p50 = median(results.iter().map(|r| r.p50).collect());
    let p99 = median(results.iter().map(|r| r.p99).collect());
    println!(
        "wq_e median of {rounds}: {:.3} M items/s (client-go 0.55), lateness p50 {:.2} ms \
         (client-go 6.4), p99 {:.2} ms (client-go 15.2)",
        throughput / 1e6,
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
    );
}
