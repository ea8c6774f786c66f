//! The queue workloads `wq_a` … `wq_d`, exactly as client-go's work queue is measured on them
//! (sizes, key shapes, what is timed), shared by the criterion bench (`workqueue.rs`) and the
//! one-run-per-process runner (`rows.rs`). Each returns the timed duration and asserts, after
//! the timing, that it did the whole workload its row defines.

#![allow(dead_code)]

use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use workqueue::{
    PriorityQueue, Queue, RateLimiter, RateLimitingQueue, default_controller_rate_limiter,
};

/// Keys in the workloads that use distinct keys.
pub const N: usize = 1_000_000;
/// Distinct keys of `wq_b`.
pub const WQ_B_DISTINCT: usize = 10_000;
/// Distinct keys of `wq_c`: a key comes back only after this many other adds.
pub const WQ_C_DISTINCT: usize = 100_000;
/// Workers of `wq_c`.
pub const WQ_C_WORKERS: usize = 4;
/// The `wq_c` producer yields to the runtime after this many adds, and then waits (yielding)
/// while more than [`WQ_C_MAX_QUEUED`] items wait for a worker. client-go's producer gets the
/// same pacing from the queue's mutex: its `Add` blocks while workers hold the lock and wakes
/// one of them, so the workers never fall a whole key cycle behind. Without it, tokio runs the
/// producer's million adds (which never wait) on one worker thread before the workers catch
/// up, and a key added again while still queued merges into its waiting copy: the run would
/// process a tenth of the items.
pub const WQ_C_YIELD_EVERY: usize = 256;
/// See [`WQ_C_YIELD_EVERY`]; below [`WQ_C_DISTINCT`], so no add ever finds its key queued.
pub const WQ_C_MAX_QUEUED: usize = WQ_C_DISTINCT / 2;

/// `key(i)` of the workloads: `ns-{i % 100}/obj-{i}`.
pub fn key_text(i: usize) -> String {
    format!("ns-{}/obj-{}", i % 100, i)
}

/// A 2-thread tokio runtime, as the machine has two cores.
pub fn runtime() -> Runtime {
    runtime_with(2)
}

/// A tokio runtime with `threads` worker threads.
pub fn runtime_with(threads: usize) -> Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

/// wq_a: one thread, 1M distinct keys: `add; get; done` in turn. `keys` are `key(0..N)`.
pub fn wq_a<K>(rt: &Runtime, keys: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    let last_key = keys.last().cloned();
    rt.block_on(async {
        let queue = Queue::new();
        let mut gets = 0;
        let mut last = None;
        let start = Instant::now();
        for key in keys {
            queue.add(key);
            if let Some(item) = queue.get().await {
                queue.done(&item);
                gets += 1;
                last = Some(item);
            }
        }
        let elapsed = start.elapsed();
        assert_eq!(gets, N, "wq_a: every add is got once");
        assert!(last == last_key, "wq_a: the last item got is the last key");
        assert!(queue.is_empty(), "wq_a: nothing is left");
        elapsed
    })
}

/// wq_a_priority: `wq_a` on the priority queue (every add at the normal priority).
pub fn wq_a_priority<K>(rt: &Runtime, keys: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    rt.block_on(async {
        let queue = PriorityQueue::new(default_controller_rate_limiter());
        let mut gets = 0;
        let start = Instant::now();
        for key in keys {
            queue.add(key);
            if let Some(item) = queue.get().await {
                queue.done(&item);
                gets += 1;
            }
        }
        let elapsed = start.elapsed();
        assert_eq!(gets, N, "wq_a_priority: every add is got once");
        assert!(queue.is_empty(), "wq_a_priority: nothing is left");
        queue.shut_down();
        elapsed
    })
}

/// wq_a2: add all 1M distinct keys, then 1M × `get` + `done`.
pub fn wq_a2<K>(rt: &Runtime, keys: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    let last_key = keys.last().cloned();
    rt.block_on(async {
        let queue = Queue::new();
        let mut gets = 0;
        let mut last = None;
        let start = Instant::now();
        for key in keys {
            queue.add(key);
        }
        let len_after_add = queue.len();
        for _ in 0..N {
            if let Some(item) = queue.get().await {
                queue.done(&item);
                gets += 1;
                last = Some(item);
            }
        }
        let elapsed = start.elapsed();
        assert_eq!(len_after_add, N, "wq_a2: every key queued once");
        assert_eq!(gets, N, "wq_a2: every key got once");
        assert!(last == last_key, "wq_a2: first in, first out");
        assert!(queue.is_empty(), "wq_a2: nothing is left");
        elapsed
    })
}

/// wq_b: 1M adds of `key(i % 10_000)`, then `get` + `done` until empty (exactly 10k gets).
/// `keys` are the 1M adds.
pub fn wq_b<K>(rt: &Runtime, keys: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
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
        assert_eq!(
            gets, WQ_B_DISTINCT,
            "wq_b: exactly one get per distinct key"
        );
        elapsed
    })
}

/// The floors of `wq_b` for a queue that finds its items in one hash table (as client-go's and
/// this crate's do): the same 1M adds into a bare `hashbrown` set with the queue's hasher, with
/// no lock, no order and no slab; then the set is drained (exactly 10k items). `by_value` takes
/// each key as `Queue::add` does (moved in, dropped when already there); otherwise each add
/// looks the key up by reference and clones only a new one. A queue's `wq_b` cannot beat the
/// by-value floor with the same key type: it is what deduplicating an owned key costs at all.
pub fn wq_b_table<K>(keys: Vec<K>, by_value: bool) -> Duration
where
    K: Clone + Eq + Hash,
{
    let start = Instant::now();
    let mut set: hashbrown::HashSet<K, foldhash::fast::RandomState> =
        hashbrown::HashSet::with_hasher(foldhash::fast::RandomState::default());
    if by_value {
        for key in keys {
            set.get_or_insert(key);
        }
    } else {
        for key in &keys {
            if !set.contains(key) {
                set.insert(key.clone());
            }
        }
    }
    let mut gets = 0;
    for item in set.drain() {
        std::hint::black_box(item);
        gets += 1;
    }
    let elapsed = start.elapsed();
    assert_eq!(
        gets, WQ_B_DISTINCT,
        "wq_b_table: exactly one item per distinct key"
    );
    elapsed
}

/// wq_c: 4 workers loop `get`/`done`; one producer adds `key(i % 100_000)` for i in 0..1M
/// (paced as [`WQ_C_YIELD_EVERY`] says), then shuts down with drain; stops when all workers
/// have exited. Every one of the 1M adds is processed. `keys` are the 1M adds.
pub fn wq_c<K>(rt: &Runtime, keys: Vec<K>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    rt.block_on(async {
        let queue: Queue<K> = Queue::new();
        let processed = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..WQ_C_WORKERS)
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
        // Let the workers reach their first wait, as client-go's harness does.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let start = Instant::now();
        let producer = tokio::spawn({
            let queue = queue.clone();
            async move {
                for (i, key) in keys.into_iter().enumerate() {
                    queue.add(key);
                    if i % WQ_C_YIELD_EVERY == WQ_C_YIELD_EVERY - 1 {
                        tokio::task::yield_now().await;
                        while queue.len() > WQ_C_MAX_QUEUED {
                            tokio::task::yield_now().await;
                        }
                    }
                }
                queue.shut_down_with_drain().await;
            }
        });
        assert!(producer.await.is_ok(), "wq_c: the producer panicked");
        for worker in workers {
            assert!(worker.await.is_ok(), "wq_c: a worker panicked");
        }
        let elapsed = start.elapsed();
        assert_eq!(
            processed.load(Ordering::Relaxed),
            N,
            "wq_c: every one of the 1M adds is processed"
        );
        assert!(queue.is_empty(), "wq_c: nothing is left");
        elapsed
    })
}

/// wq_d0: the default controller rate limiter alone: `when(key(i)); forget(key(i))` over 1M
/// distinct keys.
pub fn wq_d0<K>(keys: &[K]) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    let limiter = default_controller_rate_limiter::<K>();
    let mut last = Duration::ZERO;
    let start = Instant::now();
    for key in keys {
        last = std::hint::black_box(limiter.when(key));
        limiter.forget(key);
    }
    let elapsed = start.elapsed();
    // The 10 qps bucket reserves a token on every call: after the burst of 100 its delays
    // grow until they reach its cap (10 s; client-go's bucket is uncapped and ends at about
    // (1M − 100) ÷ 10 s).
    assert_eq!(keys.len(), N, "wq_d0: 1M calls");
    assert!(
        last >= Duration::from_secs(9),
        "wq_d0: the bucket reserved a token on every call (last delay {last:?})"
    );
    assert_eq!(
        limiter.num_requeues(&keys[N - 1]),
        0,
        "wq_d0: forget cleared the failures"
    );
    elapsed
}

/// wq_d: the rate-limiting queue with that limiter: `add_rate_limited(key(i)); forget(key(i))`
/// over 1M distinct keys; only the caller loop is timed. `keys` and `same` are two copies of
/// `key(0..N)` (the queue takes one, `forget` reads the other).
pub fn wq_d<K>(rt: &Runtime, keys: Vec<K>, same: Arc<Vec<K>>) -> Duration
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
{
    rt.block_on(async {
        let queue = RateLimitingQueue::new(default_controller_rate_limiter());
        let caller = tokio::spawn({
            let queue = queue.clone();
            async move {
                let start = Instant::now();
                for (key, same) in keys.into_iter().zip(same.iter()) {
                    queue.add_rate_limited(key);
                    queue.forget(same);
                }
                start.elapsed()
            }
        });
        let elapsed = caller.await.unwrap_or_default();
        // Every call was accepted: each item is waiting for its backoff or already ready. The
        // timer moves due items from the waiting set into the queue, in neither for a moment:
        // reading the queue before the waiting set can miss such an item but never count one
        // twice, so one of a run of readings finds every item.
        let accepted = (0..1_000)
            .map(|_| {
                let ready = queue.len();
                ready + queue.num_waiting()
            })
            .max()
            .unwrap_or(0);
        assert_eq!(
            accepted, N,
            "wq_d: every add_rate_limited scheduled its item"
        );
        queue.shut_down();
        elapsed
    })
}
