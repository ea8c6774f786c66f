//! Model-based test of the delaying queue with paused time: random adds, delayed adds, gets,
//! dones and clock advances against a reference model.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use workqueue::DelayingQueue;

use crate::model::QueueModel;
use crate::support::poll_once;

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

/// The delaying queue's semantics: the basic queue's model, plus the items waiting for their
/// ready time, which join it (through its `add`) when the clock reaches that time.
#[derive(Default)]
struct Model {
    queue: QueueModel,
    now: u64,
    seq: u64,
    /// item → (ready time in ms, sequence number of its latest move)
    waiting: HashMap<u8, (u64, u64)>,
}

impl Model {
    fn add_after(&mut self, item: u8, ms: u64) {
        if self.queue.is_shutting_down() {
            return;
        }
        if ms == 0 {
            self.queue.add(item);
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
            self.queue.add(item);
        }
    }

    /// Shuts the queue down and discards what waits.
    fn shut_down(&mut self) {
        self.queue.shut_down();
        self.waiting.clear();
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
                model.queue.add(item);
            }
            Op::AddAfter(item, ms) => {
                queue.add_after(item, Duration::from_millis(ms));
                model.add_after(item, ms);
            }
            Op::Get => prop_assert_eq!(poll_once(queue.get()), model.queue.get()),
            Op::Done(item) => {
                queue.done(&item);
                model.queue.done(item);
            }
            Op::Advance(ms) => {
                tokio::time::advance(Duration::from_millis(ms)).await;
                settle().await;
                model.advance(ms);
            }
            Op::ShutDown => {
                queue.shut_down();
                model.shut_down();
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
