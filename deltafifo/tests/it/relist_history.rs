//! A consumer pops into an indexer while a producer replays a random history in which some
//! watch events are lost and relists repair the gap. At the end the indexer equals the
//! producer's final state, and every object that vanished from the consumer's view was delivered
//! as exactly one Deleted delta (a real delete or a tombstone), never one for an absent object.
//! The same holds when relists arrive in pages that the consumer processes while later pages
//! are still coming, and when some paged relists fail part-way and are abandoned; and for the
//! in-order fifo, whose consumer works out a relist's deletions against its cache.

use super::support;

use std::collections::BTreeMap;
use std::sync::Arc;

use deltafifo::{Delta, DeltaFifo, Error, InOrderFifo};
use indexer::{Indexer, Indexers, ObjectKey, Store};
use super::Obj;
use support::{apply_one, cm, expand, rv_of, with_known};

/// A small deterministic generator, so a failing seed reproduces.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) % n
    }
}

#[derive(Default)]
struct ConsumerLog {
    deletes: BTreeMap<ObjectKey, usize>,
    tombstones: usize,
    /// Deleted deltas for objects the consumer did not have: must stay zero.
    deletes_of_absent: Vec<ObjectKey>,
}

/// Applies one change of `key` to `cache`, logging deletions.
fn consume(
    cache: &Indexer<Obj>,
    log: &mut ConsumerLog,
    key: &ObjectKey,
    delta: Delta<Obj>,
) {
    if let Delta::Deleted(deleted) = &delta {
        if deleted.is_tombstone() {
            log.tombstones += 1;
        }
        *log.deletes.entry(key.clone()).or_default() += 1;
    }
    if !apply_one(cache, key, delta) {
        log.deletes_of_absent.push(key.clone());
    }
}

/// The fifo under test: which one, and its consumer.
#[derive(Clone)]
enum Fifo {
    Deltas(DeltaFifo<Obj>),
    InOrder(InOrderFifo<Obj>),
}

impl Fifo {
    fn store(&self) -> &dyn Store<Obj> {
        match self {
            Fifo::Deltas(fifo) => fifo,
            Fifo::InOrder(fifo) => fifo,
        }
    }

    /// Pops and applies changes until the fifo is closed and drained.
    async fn consume(self, cache: Indexer<Obj>) -> ConsumerLog {
        let mut log = ConsumerLog::default();
        loop {
            let popped = match &self {
                Fifo::Deltas(fifo) => {
                    fifo.pop(|deltas, _| {
                        let (key, deltas) = deltas.into_parts();
                        deltas.for_each(|delta| consume(&cache, &mut log, &key, delta));
                    })
                    .await
                }
                Fifo::InOrder(fifo) => {
                    fifo.pop_batch(16, |batch| {
                        for item in batch {
                            for (key, delta) in expand(&cache, item) {
                                consume(&cache, &mut log, &key, delta);
                            }
                        }
                    })
                    .await
                }
            };
            if let Err(Error::Closed) = popped {
                return log;
            }
            if log.deletes.len() % 7 == 0 {
                tokio::task::yield_now().await;
            }
        }
    }

    fn close(&self) {
        match self {
            Fifo::Deltas(fifo) => fifo.close(),
            Fifo::InOrder(fifo) => fifo.close(),
        }
    }

    fn has_synced(&self) -> bool {
        match self {
            Fifo::Deltas(fifo) => fifo.has_synced(),
            Fifo::InOrder(fifo) => fifo.has_synced(),
        }
    }
}

/// How relists reach the fifo.
#[derive(Clone, Copy, Debug)]
enum Relists {
    /// One `replace` with the whole list.
    Whole,
    /// `replace_in_pages` with random page sizes; one in four is abandoned after some pages
    /// (a list that failed) and then retried in full.
    Paged,
}

/// Relists `truth` into `fifo` as `relists` says.
async fn relist(
    fifo: &dyn Store<Obj>,
    truth: &BTreeMap<String, Arc<Obj>>,
    rv: u64,
    rng: &mut Rng,
    relists: Relists,
) {
    let objects: Vec<Arc<Obj>> = truth.values().cloned().collect();
    if let Relists::Whole = relists {
        fifo.replace(objects, rv.to_string()).unwrap();
        return;
    }
    if rng.below(4) == 0 {
        let mut abandoned = fifo.replace_in_pages();
        let pages = 1 + rng.below(3) as usize;
        for page in objects.chunks(1 + rng.below(8) as usize).take(pages) {
            abandoned.page(page.to_vec()).unwrap();
            tokio::task::yield_now().await;
        }
        drop(abandoned);
    }
    let mut replace = fifo.replace_in_pages();
    for page in objects.chunks(1 + rng.below(20) as usize) {
        replace.page(page.to_vec()).unwrap();
        tokio::task::yield_now().await;
    }
    replace.finish(rv.to_string()).unwrap();
}

async fn run_history(seed: u64, relists: Relists, in_order: bool) {
    let cache: Indexer<Obj> = Indexer::new(Indexers::new().with_namespace());
    let queue = if in_order {
        Fifo::InOrder(InOrderFifo::default())
    } else {
        Fifo::Deltas(with_known(&cache))
    };
    let consumer = tokio::spawn(queue.clone().consume(cache.clone()));
    let fifo = queue.store();

    // The producer: the server's truth, and what the watch delivers (some events get lost).
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut truth: BTreeMap<String, Arc<Obj>> = BTreeMap::new();
    let mut rv = 0u64;
    let mut watch_up = true;
    for step in 0..3000 {
        rv += 1;
        let name = format!("obj-{}", rng.below(60));
        let ns = format!("ns-{}", rng.below(3));
        let key = format!("{ns}/{name}");
        let event = match (truth.contains_key(&key), rng.below(3)) {
            (false, _) => {
                let obj = cm(&ns, &name, rv);
                truth.insert(key, Arc::clone(&obj));
                Some((0, obj))
            }
            (true, 0) => truth
                .remove(&key)
                .map(|old| (2, cm(&ns, &name, rv_of(&old)))),
            (true, _) => {
                let obj = cm(&ns, &name, rv);
                truth.insert(key, Arc::clone(&obj));
                Some((1, obj))
            }
        };
        if watch_up && let Some((kind, obj)) = event {
            match kind {
                0 => fifo.add(obj).unwrap(),
                1 => fifo.update(obj).unwrap(),
                _ => fifo.delete(obj).unwrap(),
            }
        }
        // Now and then the watch drops; events are lost until a relist repairs the gap.
        if rng.below(50) == 0 {
            watch_up = false;
        }
        if !watch_up && rng.below(10) == 0 {
            relist(fifo, &truth, rv, &mut rng, relists).await;
            watch_up = true;
        }
        if step % 5 == 0 && rng.below(20) == 0 {
            fifo.resync().unwrap();
        }
        if step % 11 == 0 {
            tokio::task::yield_now().await;
        }
    }
    // A final relist, then everything drains.
    relist(fifo, &truth, rv, &mut rng, relists).await;
    queue.close();
    let log = consumer.await.expect("consumer");

    let cached: BTreeMap<String, u64> = cache
        .list()
        .iter()
        .map(|o| (indexer::key_of(o.as_ref()).unwrap().to_string(), rv_of(o)))
        .collect();
    let expected: BTreeMap<String, u64> =
        truth.iter().map(|(k, o)| (k.clone(), rv_of(o))).collect();
    assert_eq!(
        cached, expected,
        "seed {seed} ({relists:?}, in order: {in_order}): cache differs from the server"
    );
    assert!(
        log.deletes_of_absent.is_empty(),
        "seed {seed} ({relists:?}): duplicate deletes for {:?}",
        log.deletes_of_absent
    );
    assert!(
        log.tombstones > 0,
        "seed {seed} ({relists:?}): the history never exercised a tombstone"
    );
    assert!(queue.has_synced());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_converges_on_producer_state_through_relists() {
    for seed in 1..=20 {
        run_history(seed, Relists::Whole, false).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_converges_through_paged_and_abandoned_relists() {
    for seed in 1..=20 {
        run_history(seed, Relists::Paged, false).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_order_consumer_converges_through_whole_paged_and_abandoned_relists() {
    for seed in 1..=20 {
        run_history(seed, Relists::Whole, true).await;
        run_history(seed, Relists::Paged, true).await;
    }
}
