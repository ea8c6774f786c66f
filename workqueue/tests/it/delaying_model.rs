//! Model-based test of the delaying queue with paused time: random adds, delayed adds, gets,
//! dones and clock advances against a reference model.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use workqueue::DelayingQueue;

#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    AddAfter(u8, u64),
    Get,
    Done(u8),
    Advance(u64),
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..6).prop_map(Op::Add),
        6 => (0u8..6, 0u64..30).prop_map(|(item, ms)| Op::AddAfter(item, ms)),
        4 => Just(Op::Get),
        3 => (0u8..6).prop_map(Op::Done),
        4 => (0u64..15).prop_map(Op::Advance),
        1 => Just(Op::ShutDown),
    ]
}

#[derive(Default)]
struct Model {
    now: u64,
    seq: u64,
    /// item → (ready time in ms, sequence number of its latest move)
    waiting: HashMap<u8, (u64, u64)>,
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
    shutting_down: bool,
}

impl Model {
    fn add(&mut self, item: u8) {
        if self.shutting_down || !self.dirty.insert(item) {
            return;
        }
        if !self.processing.contains(&item) {
            self.queue.push_back(item);
        }
    }

    fn add_after(&mut self, item: u8, ms: u64) {
        if self.shutting_down {
            return;
        }
        if ms == 0 {
            self.add(item);
            return;
        }
        let at = self.now + ms;
        match self.waiting.get(&item) {
            Some(&(current, _)) if current <= at => {}
            _ => {
                self.waiting.insert(item, (at, self.seq));
                self.seq += 1;
            }
        }
    }

    fn advance(&mut self, ms: u64) {
        self.now += ms;
        let now = self.now;
        let mut due: Vec<(u64, u64, u8)> = self
            .waiting
            .iter()
            .filter(|(_, (at, _))| *at <= now)
            .map(|(item, (at, seq))| (*at, *seq, *item))
            .collect();
        due.sort_unstable();
        for (_, _, item) in due {
            self.waiting.remove(&item);
            self.add(item);
        }
    }

    fn get(&mut self) -> Option<Option<u8>> {
        match self.queue.pop_front() {
            Some(item) => {
                self.dirty.remove(&item);
                self.processing.insert(item);
                Some(Some(item))
            }
            None if self.shutting_down => Some(None),
            None => None,
        }
    }

    fn done(&mut self, item: u8) {
        if self.processing.remove(&item) && self.dirty.contains(&item) {
            self.queue.push_back(item);
        }
    }
}

fn poll_get(queue: &DelayingQueue<u8>) -> Option<Option<u8>> {
    let mut get = pin!(queue.get());
    match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(item) => Some(item),
        Poll::Pending => None,
    }
}

/// Lets the timer task run after the clock moved.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

async fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let queue = DelayingQueue::new();
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Add(item) => {
                queue.add(item);
                model.add(item);
            }
            Op::AddAfter(item, ms) => {
                queue.add_after(item, Duration::from_millis(ms));
                model.add_after(item, ms);
            }
            Op::Get => prop_assert_eq!(poll_get(&queue), model.get()),
            Op::Done(item) => {
                queue.done(&item);
                model.done(item);
            }
            Op::Advance(ms) => {
                tokio::time::advance(Duration::from_millis(ms)).await;
                settle().await;
                model.advance(ms);
            }
            Op::ShutDown => {
                queue.shut_down();
                model.shutting_down = true;
                model.waiting.clear();
            }
        }
        prop_assert_eq!(queue.len(), model.queue.len());
        prop_assert_eq!(queue.num_waiting(), model.waiting.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn delaying_queue_matches_the_model(ops in proptest::collection::vec(op(), 1..120)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build();
        let Ok(runtime) = runtime else {
            return Err(TestCaseError::fail("no runtime"));
        };
        runtime.block_on(run(ops))?;
    }
}
