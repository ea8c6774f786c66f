//! The bound on the backlog, on both fifos: a producer that asks for room waits while more
//! keys (delta fifo) or items (in-order fifo) are queued than the bound, until the consumer's
//! pops bring the queue down to half of it, or the fifo closes; writes themselves are never
//! refused.

use std::future::Future;
use std::sync::Arc;

use deltafifo::{DeltaFifo, DeltaFifoOptions, InOrderFifo, InOrderFifoOptions, Queue};
use futures::FutureExt;
use super::Obj;

use super::support::cm;

/// A fifo with an optional bound on its backlog.
trait Bounded: Queue<Obj> {
    fn bounded(limit: usize) -> Self;
    fn unbounded() -> Self;
    fn wait_for_room(&self) -> impl Future<Output = ()> + Send + '_;
}

impl Bounded for DeltaFifo<Obj> {
    fn bounded(limit: usize) -> Self {
        DeltaFifo::new(DeltaFifoOptions::new().backlog_limit(limit))
    }

    fn unbounded() -> Self {
        DeltaFifo::default()
    }

    fn wait_for_room(&self) -> impl Future<Output = ()> + Send + '_ {
        DeltaFifo::wait_for_room(self)
    }
}

impl Bounded for InOrderFifo<Obj> {
    fn bounded(limit: usize) -> Self {
        InOrderFifo::new(InOrderFifoOptions::new().backlog_limit(limit))
    }

    fn unbounded() -> Self {
        InOrderFifo::default()
    }

    fn wait_for_room(&self) -> impl Future<Output = ()> + Send + '_ {
        InOrderFifo::wait_for_room(self)
    }
}

fn fill(fifo: &impl Bounded, keys: u64) {
    for i in 0..keys {
        fifo.update(cm("ns", &format!("cm-{i}"), i + 1)).unwrap();
    }
}

async fn pop_one(fifo: &impl Bounded) {
    fifo.pop_batch(1, |_| ()).await.unwrap();
}

async fn unbounded_never_asks_to_wait<F: Bounded>() {
    let fifo = F::unbounded();
    fill(&fifo, 100);
    assert!(fifo.backpressure().is_none());
    assert!(fifo.wait_for_room().now_or_never().is_some());
}

#[tokio::test]
async fn an_unbounded_fifo_never_asks_to_wait() {
    unbounded_never_asks_to_wait::<DeltaFifo<Obj>>().await;
    unbounded_never_asks_to_wait::<InOrderFifo<Obj>>().await;
}

async fn room_within_the_bound<F: Bounded>() {
    let fifo = F::bounded(4);
    fill(&fifo, 4);
    assert!(fifo.backpressure().is_none());
    assert!(fifo.wait_for_room().now_or_never().is_some());
}

#[tokio::test]
async fn within_the_bound_there_is_room() {
    room_within_the_bound::<DeltaFifo<Obj>>().await;
    room_within_the_bound::<InOrderFifo<Obj>>().await;
}

async fn waits_until_half_the_bound<F: Bounded>() {
    let fifo = F::bounded(4);
    // Writes are never refused: all six are queued.
    fill(&fifo, 6);
    assert_eq!(fifo.len(), 6);
    let mut room = fifo.backpressure().expect("over the bound");
    assert!((&mut room).now_or_never().is_none());
    // Down to the bound is not yet enough: the producer resumes at half of it.
    for queued in [5, 4, 3] {
        pop_one(&fifo).await;
        assert_eq!(fifo.len(), queued);
        assert!(
            (&mut room).now_or_never().is_none(),
            "woke at {queued} queued"
        );
    }
    pop_one(&fifo).await;
    assert_eq!(fifo.len(), 2);
    assert!(
        room.now_or_never().is_some(),
        "still waiting at half the bound"
    );
}

#[tokio::test]
async fn over_the_bound_writes_still_go_in_and_the_producer_waits_until_half_the_bound() {
    waits_until_half_the_bound::<DeltaFifo<Obj>>().await;
    waits_until_half_the_bound::<InOrderFifo<Obj>>().await;
}

async fn woken_across_threads<F: Bounded>() {
    let fifo = F::bounded(8);
    let consumer = tokio::spawn({
        let fifo = fifo.clone();
        async move {
            let mut popped = 0usize;
            while let Ok(keys) = fifo.pop_batch(3, |batch| batch.len()).await {
                popped += keys;
            }
            popped
        }
    });
    // The producer asks for room before every write, as a reflector does: the queue never
    // holds more than the bound plus the one write after the last check.
    let mut most = 0;
    for i in 0..2_000u64 {
        if let Some(room) = fifo.backpressure() {
            room.await;
        }
        fifo.update(cm("ns", &format!("cm-{i}"), i + 1)).unwrap();
        most = most.max(fifo.len());
    }
    assert!(most <= 9, "the queue reached {most}");
    fifo.close();
    assert_eq!(consumer.await.unwrap(), 2_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_producer_is_woken_by_a_consumer_on_another_thread() {
    woken_across_threads::<DeltaFifo<Obj>>().await;
    woken_across_threads::<InOrderFifo<Obj>>().await;
}

async fn released_by_close<F: Bounded>() {
    let fifo = F::bounded(2);
    fill(&fifo, 5);
    let waiting = tokio::spawn({
        let fifo = fifo.clone();
        async move { fifo.wait_for_room().await }
    });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    fifo.close();
    waiting.await.unwrap();
}

#[tokio::test]
async fn closing_the_fifo_releases_a_waiting_producer() {
    released_by_close::<DeltaFifo<Obj>>().await;
    released_by_close::<InOrderFifo<Obj>>().await;
}

async fn dropped_wait<F: Bounded>() {
    let fifo = Arc::new(F::bounded(2));
    fill(&*fifo, 5);
    let wait = fifo.wait_for_room();
    drop(wait);
    // A later producer still waits and is still woken.
    let mut room = fifo.backpressure().expect("over the bound");
    assert!((&mut room).now_or_never().is_none());
    for _ in 0..4 {
        pop_one(&*fifo).await;
    }
    assert!(room.now_or_never().is_some());
}

#[tokio::test]
async fn a_dropped_wait_leaves_nothing_behind() {
    dropped_wait::<DeltaFifo<Obj>>().await;
    dropped_wait::<InOrderFifo<Obj>>().await;
}
