//! Stress: many workers, random re-adds while processing, then drain; the plain queue and the
//! priority queue (whose adds get random priorities, so items also move between priorities).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use workqueue::{
    AddOptions, ItemExponentialFailure, Priority, PriorityQueue, Queue, RateLimitingQueue,
};

const WORKERS: usize = 8;
const KEYS: usize = 1_000;
const ADDS: usize = 200_000;
const PRODUCERS: usize = 2;

/// A small deterministic xorshift generator (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What the stress tests need of a queue.
trait Stressed: Clone + Send + Sync + 'static {
    /// Adds `key`; `choice` is a random number the queue may use (the priority queue picks a
    /// priority with it).
    fn add(&self, key: u32, choice: u64);
    fn add_rate_limited(&self, key: u32);
    fn forget(&self, key: &u32);
    fn num_requeues(&self, key: &u32) -> usize;
    fn get(&self) -> impl Future<Output = Option<u32>> + Send + '_;
    fn done(&self, key: &u32);
    fn len(&self) -> usize;
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_;
}

impl Stressed for Queue<u32> {
    fn add(&self, key: u32, _: u64) {
        Queue::add(self, key);
    }
    fn add_rate_limited(&self, key: u32) {
        Queue::add(self, key);
    }
    fn forget(&self, _: &u32) {}
    fn num_requeues(&self, _: &u32) -> usize {
        0
    }
    fn get(&self) -> impl Future<Output = Option<u32>> + Send + '_ {
        Queue::get(self)
    }
    fn done(&self, key: &u32) {
        Queue::done(self, key);
    }
    fn len(&self) -> usize {
        Queue::len(self)
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
        Queue::shut_down_with_drain(self)
    }
}

impl Stressed for RateLimitingQueue<u32> {
    fn add(&self, key: u32, _: u64) {
        RateLimitingQueue::add(self, key);
    }
    fn add_rate_limited(&self, key: u32) {
        RateLimitingQueue::add_rate_limited(self, key);
    }
    fn forget(&self, key: &u32) {
        RateLimitingQueue::forget(self, key);
    }
    fn num_requeues(&self, key: &u32) -> usize {
        RateLimitingQueue::num_requeues(self, key)
    }
    fn get(&self) -> impl Future<Output = Option<u32>> + Send + '_ {
        RateLimitingQueue::get(self)
    }
    fn done(&self, key: &u32) {
        RateLimitingQueue::done(self, key);
    }
    fn len(&self) -> usize {
        RateLimitingQueue::len(self)
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
        RateLimitingQueue::shut_down_with_drain(self)
    }
}

/// The priorities the priority queue's stress adds pick from.
const PRIORITIES: [Priority; 3] = [Priority::LOW, Priority::NORMAL, Priority::MAX];

impl Stressed for PriorityQueue<u32> {
    fn add(&self, key: u32, choice: u64) {
        let priority = PRIORITIES[(choice % 3) as usize];
        self.add_with(key, AddOptions::new().priority(priority));
    }
    fn add_rate_limited(&self, key: u32) {
        let priority = PRIORITIES[(key % 3) as usize];
        self.add_with(key, AddOptions::new().priority(priority).rate_limited());
    }
    fn forget(&self, key: &u32) {
        PriorityQueue::forget(self, key);
    }
    fn num_requeues(&self, key: &u32) -> usize {
        PriorityQueue::num_requeues(self, key)
    }
    fn get(&self) -> impl Future<Output = Option<u32>> + Send + '_ {
        PriorityQueue::get(self)
    }
    fn done(&self, key: &u32) {
        PriorityQueue::done(self, key);
    }
    fn len(&self) -> usize {
        PriorityQueue::len(self)
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
        PriorityQueue::shut_down_with_drain(self)
    }
}

struct Tracker {
    /// Whether a worker currently holds the key.
    busy: Vec<AtomicBool>,
    /// Bumped right before every add of the key.
    generation: Vec<AtomicU64>,
    /// The generation a worker saw right after it got the key: every add bumped before this
    /// is covered by that processing.
    covered: Vec<AtomicU64>,
    /// Times two workers held the same key at once.
    overlaps: AtomicUsize,
    processed: AtomicUsize,
    /// Re-adds by workers are allowed while this is set.
    readds_open: AtomicBool,
    /// Workers between checking `readds_open` and finishing their re-add.
    readding: AtomicUsize,
    readds: AtomicUsize,
}

impl Tracker {
    fn new() -> Self {
        Self {
            busy: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            generation: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            covered: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            overlaps: AtomicUsize::new(0),
            processed: AtomicUsize::new(0),
            readds_open: AtomicBool::new(true),
            readding: AtomicUsize::new(0),
            readds: AtomicUsize::new(0),
        }
    }

    fn add(&self, queue: &impl Stressed, key: usize, choice: u64) {
        self.generation[key].fetch_add(1, SeqCst);
        queue.add(key as u32, choice);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_never_share_a_key_and_lose_no_add() {
    never_share_a_key_and_lose_no_add(Queue::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_never_share_a_key_of_the_priority_queue_and_lose_no_add() {
    let limiter = ItemExponentialFailure::new(Duration::from_micros(100), Duration::from_millis(2));
    never_share_a_key_and_lose_no_add(PriorityQueue::new(limiter)).await;
}

async fn never_share_a_key_and_lose_no_add(queue: impl Stressed) {
    let tracker = Arc::new(Tracker::new());

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let queue = queue.clone();
            let tracker = Arc::clone(&tracker);
            tokio::spawn(async move {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1));
                while let Some(item) = queue.get().await {
                    let key = item as usize;
                    if tracker.busy[key].swap(true, SeqCst) {
                        tracker.overlaps.fetch_add(1, SeqCst);
                    }
                    let seen = tracker.generation[key].load(SeqCst);
                    tracker.covered[key].fetch_max(seen, SeqCst);
                    tracker.processed.fetch_add(1, SeqCst);
                    // "Work": sometimes let other tasks run while holding the key.
                    if rng.below(4) == 0 {
                        tokio::task::yield_now().await;
                    }
                    // Random re-adds while processing: this key or another one.
                    if rng.below(8) == 0 {
                        tracker.readding.fetch_add(1, SeqCst);
                        if tracker.readds_open.load(SeqCst) {
                            let other = if rng.below(2) == 0 {
                                key
                            } else {
                                rng.below(KEYS)
                            };
                            tracker.add(&queue, other, rng.next());
                            tracker.readds.fetch_add(1, SeqCst);
                        }
                        tracker.readding.fetch_sub(1, SeqCst);
                    }
                    tracker.busy[key].store(false, SeqCst);
                    queue.done(&item);
                }
            })
        })
        .collect();

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let queue = queue.clone();
            let tracker = Arc::clone(&tracker);
            tokio::spawn(async move {
                let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ (p as u64 + 7));
                for i in 0..ADDS / PRODUCERS {
                    let key = rng.below(KEYS);
                    tracker.add(&queue, key, rng.next());
                    if i % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        assert!(producer.await.is_ok());
    }

    // Close worker re-adds (adds after shutdown are dropped by design), then drain.
    tracker.readds_open.store(false, SeqCst);
    while tracker.readding.load(SeqCst) != 0 {
        tokio::task::yield_now().await;
    }
    let drained =
        tokio::time::timeout(Duration::from_secs(120), queue.shut_down_with_drain()).await;
    assert!(drained.is_ok(), "drain did not return");
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.get().await, None);
    for worker in workers {
        assert!(worker.await.is_ok());
    }

    assert_eq!(
        tracker.overlaps.load(SeqCst),
        0,
        "a key was processed by two workers at once"
    );
    for key in 0..KEYS {
        let generation = tracker.generation[key].load(SeqCst);
        let covered = tracker.covered[key].load(SeqCst);
        assert_eq!(
            covered, generation,
            "key {key} was added after its last processing started but not processed again"
        );
    }
    let processed = tracker.processed.load(SeqCst);
    assert!(
        processed >= KEYS.min(ADDS),
        "only {processed} items processed"
    );
    assert!(tracker.readds.load(SeqCst) > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limited_retries_under_contention_finish_every_key_once() {
    let limiter = ItemExponentialFailure::new(Duration::from_micros(100), Duration::from_millis(2));
    retries_finish_every_key_once(RateLimitingQueue::new(limiter)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limited_retries_of_the_priority_queue_finish_every_key_once() {
    let limiter = ItemExponentialFailure::new(Duration::from_micros(100), Duration::from_millis(2));
    retries_finish_every_key_once(PriorityQueue::new(limiter)).await;
}

async fn retries_finish_every_key_once(queue: impl Stressed) {
    const KEYS: u32 = 500;
    const FAILURES: usize = 3;
    let busy: Arc<Vec<AtomicBool>> = Arc::new((0..KEYS).map(|_| AtomicBool::new(false)).collect());
    let successes: Arc<Vec<AtomicUsize>> =
        Arc::new((0..KEYS).map(|_| AtomicUsize::new(0)).collect());
    let overlaps = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let all_done = Arc::new(tokio::sync::Notify::new());

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (queue, busy, successes, overlaps, finished, all_done) = (
                queue.clone(),
                Arc::clone(&busy),
                Arc::clone(&successes),
                Arc::clone(&overlaps),
                Arc::clone(&finished),
                Arc::clone(&all_done),
            );
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    let slot = key as usize;
                    if busy[slot].swap(true, SeqCst) {
                        overlaps.fetch_add(1, SeqCst);
                    }
                    tokio::task::yield_now().await;
                    if queue.num_requeues(&key) < FAILURES {
                        queue.add_rate_limited(key);
                    } else if successes[slot].fetch_add(1, SeqCst) == 0 {
                        queue.forget(&key);
                        if finished.fetch_add(1, SeqCst) + 1 == KEYS as usize {
                            all_done.notify_one();
                        }
                    }
                    busy[slot].store(false, SeqCst);
                    queue.done(&key);
                }
            })
        })
        .collect();

    let notified = all_done.notified();
    for key in 0..KEYS {
        queue.add(key, u64::from(key));
    }
    assert!(
        tokio::time::timeout(Duration::from_secs(120), notified)
            .await
            .is_ok(),
        "not every key finished"
    );
    queue.shut_down_with_drain().await;
    for worker in workers {
        assert!(worker.await.is_ok());
    }
    assert_eq!(overlaps.load(SeqCst), 0);
    for (key, count) in successes.iter().enumerate() {
        assert_eq!(count.load(SeqCst), 1, "key {key}");
        assert_eq!(queue.num_requeues(&(key as u32)), 0);
    }
}
