//! The in-order fifo's own rules, beyond client-go's tests (`real_fifo`): producers never wait
//! for a batch being processed, batches up to a cap, the resource version the consumer has
//! processed (bookmarks included), relists in pages, reads. The bound on the backlog is tested
//! on both fifos in `backlog`.

use super::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deltafifo::{Error, InOrderFifo, InOrderFifoOptions, Item};
use futures::FutureExt;
use indexer::Store;
use super::Obj;
use kube::Resource;
use support::{cm, key, show_item};

type Fifo = InOrderFifo<Obj>;

fn fill(fifo: &Fifo, items: u64) {
    for i in 0..items {
        fifo.update(cm("ns", &format!("cm-{i}"), i + 1)).unwrap();
    }
}

async fn pop_one(fifo: &Fifo) -> Item<Obj> {
    fifo.pop_batch(1, |batch| batch.into_items().remove(0))
        .await
        .expect("open fifo")
}

/// The consumer holds a batch while a producer on another thread writes a thousand changes:
/// every write is accepted before the batch's processing returns (were a write to wait for it,
/// the processing would wait for the producer forever, and fail at the deadline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producers_never_wait_for_a_batch_being_processed() {
    const WRITES: u64 = 1_000;
    let fifo = Fifo::default();
    fifo.add(cm("ns", "first", 1)).unwrap();
    let (written, all_written) = std::sync::mpsc::channel();
    let processed = fifo
        .pop_batch(10, |batch| {
            let producer = std::thread::spawn({
                let fifo = fifo.clone();
                move || {
                    for i in 0..WRITES {
                        fifo.update(cm("ns", &format!("cm-{i}"), i + 2)).unwrap();
                    }
                    fifo.resync().unwrap();
                    fifo.replace(vec![], "5000".into()).unwrap();
                    written.send(()).unwrap();
                }
            });
            let accepted = all_written.recv_timeout(Duration::from_secs(60));
            producer.join().unwrap();
            (batch.len(), accepted.is_ok())
        })
        .await
        .unwrap();
    assert_eq!(processed, (1, true), "the writes waited for the consumer");
    assert_eq!(fifo.len() as u64, WRITES + 2);
}

#[tokio::test]
async fn a_pop_takes_up_to_its_cap_in_arrival_order() {
    let fifo = Fifo::default();
    fill(&fifo, 7);
    let mut sizes = Vec::new();
    let mut names = Vec::new();
    while !fifo.is_empty() {
        let batch = fifo.pop_batch(3, |batch| batch.into_items()).await.unwrap();
        sizes.push(batch.len());
        names.extend(batch.iter().map(show_item));
    }
    assert_eq!(sizes, [3, 3, 1]);
    let expected: Vec<String> = (0..7)
        .map(|i| format!("Updated ns/cm-{i} {}", i + 1))
        .collect();
    assert_eq!(names, expected);
    // A cap of zero still pops one item.
    fill(&fifo, 2);
    assert_eq!(fifo.pop_batch(0, |batch| batch.len()).await, Ok(1));
}

#[tokio::test]
async fn the_synced_resource_version_follows_what_was_processed() {
    let fifo = Fifo::default();
    assert_eq!(fifo.synced_resource_version(), "");
    fifo.add(cm("ns", "a", 5)).unwrap();
    fifo.bookmark("9".into());
    fifo.update(cm("ns", "a", 10)).unwrap();
    // Not before the processing returns.
    let during = fifo
        .pop_batch(10, |_| fifo.synced_resource_version())
        .await
        .unwrap();
    assert_eq!(during, "");
    assert_eq!(fifo.synced_resource_version(), "5");
    // The bookmark is taken before the next batch, whose processing sees it.
    let during = fifo
        .pop_batch(10, |_| fifo.synced_resource_version())
        .await
        .unwrap();
    assert_eq!(during, "9");
    assert_eq!(fifo.synced_resource_version(), "10");
    // A relist: its resource version. A resync changes nothing.
    fifo.replace(vec![cm("ns", "a", 10)], "20".into()).unwrap();
    fifo.resync().unwrap();
    pop_one(&fifo).await;
    assert_eq!(fifo.synced_resource_version(), "20");
    pop_one(&fifo).await;
    assert_eq!(fifo.synced_resource_version(), "20");
    // A processing that panics does not advance it.
    fifo.update(cm("ns", "a", 30)).unwrap();
    let panicked = AssertUnwindPop(&fifo).pop().await;
    assert!(panicked);
    assert_eq!(fifo.synced_resource_version(), "20");
}

/// Pops one batch with a processing that panics; returns whether it did.
struct AssertUnwindPop<'a>(&'a Fifo);

impl AssertUnwindPop<'_> {
    async fn pop(self) -> bool {
        std::panic::AssertUnwindSafe(self.0.pop_batch(1, |_| panic!("handler bug")))
            .catch_unwind()
            .await
            .is_err()
    }
}

/// A bookmark with nothing after it is taken by a pop that then waits for more: the consumer
/// is idle, so everything before it has been processed.
#[tokio::test]
async fn a_bookmark_reaches_an_idle_consumer() {
    let fifo = Fifo::default();
    fifo.add(cm("ns", "a", 3)).unwrap();
    pop_one(&fifo).await;
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move { fifo.pop_batch(10, |batch| batch.len()).await }
    });
    fifo.bookmark("7".into());
    // An empty resource version is ignored.
    fifo.bookmark(String::new());
    for _ in 0..100 {
        if fifo.synced_resource_version() == "7" {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(fifo.synced_resource_version(), "7");
    assert!(!consumer.is_finished(), "the pop waits for an item");
    assert!(fifo.is_empty());
    fifo.close();
    assert_eq!(consumer.await.unwrap(), Err(Error::Closed));
}

#[tokio::test]
async fn a_panicking_consumer_still_counts_toward_sync() {
    let fifo = Fifo::default();
    fifo.replace(vec![cm("ns", "a", 1)], "1".into()).unwrap();
    assert!(AssertUnwindPop(&fifo).pop().await);
    assert!(fifo.has_synced());
    // And the fifo goes on.
    fifo.add(cm("ns", "b", 2)).unwrap();
    assert_eq!(show_item(&pop_one(&fifo).await), "Added ns/b 2");
}

#[tokio::test]
async fn the_synced_future_resolves_once_the_initial_list_is_processed() {
    let fifo = Fifo::default();
    fifo.replace(vec![cm("ns", "a", 1)], "1".into()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let waiter = tokio::spawn({
        let (fifo, done) = (fifo.clone(), Arc::clone(&done));
        async move {
            fifo.synced().await;
            done.store(true, Ordering::SeqCst);
        }
    });
    tokio::task::yield_now().await;
    assert!(!done.load(Ordering::SeqCst));
    pop_one(&fifo).await;
    waiter.await.unwrap();
    assert!(done.load(Ordering::SeqCst));
    // A later relist does not un-sync it, and its items are not in the initial list.
    fifo.replace(vec![], "2".into()).unwrap();
    let initial = fifo
        .pop_batch(1, |batch| batch.in_initial_list())
        .await
        .unwrap();
    assert!(!initial);
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn closing_drains_then_ends() {
    let fifo = Fifo::default();
    fill(&fifo, 5);
    fifo.close();
    assert!(fifo.is_closed());
    assert_eq!(fifo.pop_batch(100, |batch| batch.len()).await, Ok(5));
    assert_eq!(
        fifo.pop_batch(100, |batch| batch.len()).await,
        Err(Error::Closed)
    );
}

#[tokio::test]
async fn a_pop_waits_until_something_is_queued() {
    let fifo = Fifo::default();
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move {
            fifo.pop_batch(5, |batch| {
                batch.items().iter().map(show_item).collect::<Vec<_>>()
            })
            .await
        }
    });
    tokio::task::yield_now().await;
    assert!(!consumer.is_finished());
    fifo.add(cm("ns", "a", 1)).unwrap();
    assert_eq!(consumer.await.unwrap(), Ok(vec!["Added ns/a 1".to_owned()]));
}

/// As with the delta fifo: the transform is the only owner of a freshly written object.
#[test]
fn the_transform_is_the_only_owner_of_a_fresh_object() {
    let owners = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&owners);
    let fifo: Fifo = InOrderFifo::new(InOrderFifoOptions::new().transform(move |obj| {
        seen.lock().unwrap().push(Arc::strong_count(&obj));
        Ok(obj)
    }));
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.delete(cm("ns", "a", 2)).unwrap();
    fifo.replace(vec![cm("ns", "b", 3)], "3".into()).unwrap();
    assert_eq!(*owners.lock().unwrap(), [1, 1, 1]);
}

#[test]
fn a_failing_transform_refuses_the_write_and_queues_nothing() {
    let fifo: Fifo =
        InOrderFifo::new(InOrderFifoOptions::new().transform(|obj: Arc<Obj>| {
            if obj.meta().name.as_deref() == Some("bad") {
                Err("refused".into())
            } else {
                Ok(obj)
            }
        }));
    let err = fifo.add(cm("ns", "bad", 1)).unwrap_err();
    assert!(err.to_string().contains("ns/bad"), "{err}");
    assert!(
        fifo.replace(vec![cm("ns", "ok", 1), cm("ns", "bad", 2)], "2".into())
            .is_err()
    );
    assert!(fifo.is_empty());
    assert!(!fifo.has_synced(), "a refused write does not count");
}

#[tokio::test]
async fn a_relist_in_pages_is_one_item_at_its_end_and_nothing_when_abandoned() {
    let fifo = Fifo::default();
    let mut abandoned = fifo.replace_in_pages();
    abandoned.page(vec![cm("ns", "a", 1)]).unwrap();
    drop(abandoned);
    assert!(fifo.is_empty());
    let mut paged = fifo.replace_in_pages();
    paged
        .page(vec![cm("ns", "a", 1), cm("ns", "b", 2)])
        .unwrap();
    paged.page(vec![cm("ns", "c", 3)]).unwrap();
    assert!(fifo.is_empty(), "nothing is queued before the end");
    paged.finish("3".into()).unwrap();
    assert_eq!(
        show_item(&pop_one(&fifo).await),
        "Replaced [ns/a 1, ns/b 2, ns/c 3] at 3"
    );
    assert!(fifo.has_synced());
}

#[test]
fn store_reads_show_the_newest_queued_state_of_each_key() {
    let fifo = Fifo::default();
    fifo.add(cm("ns", "a", 1)).unwrap();
    fifo.add(cm("ns", "b", 2)).unwrap();
    fifo.update(cm("ns", "a", 3)).unwrap();
    fifo.replace(vec![cm("ns", "c", 4)], "4".into()).unwrap();
    fifo.delete(cm("ns", "b", 5)).unwrap();
    let newest = fifo.get_by_key(&key("ns/a")).unwrap();
    assert_eq!(newest.meta().resource_version.as_deref(), Some("3"));
    let keys: Vec<String> = fifo.list_keys().iter().map(ToString::to_string).collect();
    assert_eq!(keys, ["ns/a", "ns/b", "ns/c"]);
    let rvs: Vec<u64> = fifo.list().iter().map(|obj| support::rv_of(obj)).collect();
    assert_eq!(rvs, [3, 5, 4]);
    assert!(fifo.get_by_key(&key("ns/d")).is_none());
    assert_eq!(fifo.len(), 5);
}
