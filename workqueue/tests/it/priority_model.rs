//! Model-based test of the priority queue with paused time: random adds with priorities,
//! delayed and rate-limited adds, gets, dones, forgets and clock advances against a reference
//! model built on the basic queue's (with priorities).

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use workqueue::{AddOptions, ItemExponentialFailure, Priority, PriorityQueue};

use crate::model::QueueModel;
use crate::support::poll_once;

/// The priorities the test uses: controller-runtime's low and normal, and a few around them.
const PRIORITIES: [i32; 5] = [-100, -1, 0, 1, 7];

#[derive(Debug, Clone)]
enum Op {
    Add(u8, usize),
    AddAfter(u8, usize, u64),
    AddRateLimited(u8, usize),
    /// A rate-limited add whose delay is capped by a non-zero `after` (0: no cap).
    AddRateLimitedCapped(u8, usize, u64),
    Get,
    Done(u8),
    Forget(u8),
    Advance(u64),
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    let item = 0u8..6;
    let priority = 0..PRIORITIES.len();
    prop_oneof![
        5 => (item.clone(), priority.clone()).prop_map(|(i, p)| Op::Add(i, p)),
        4 => (item.clone(), priority.clone(), 0u64..30).prop_map(|(i, p, ms)| Op::AddAfter(i, p, ms)),
        3 => (item.clone(), priority.clone()).prop_map(|(i, p)| Op::AddRateLimited(i, p)),
        1 => (item.clone(), priority, 0u64..4)
            .prop_map(|(i, p, cap)| Op::AddRateLimitedCapped(i, p, cap)),
        6 => Just(Op::Get),
        4 => item.clone().prop_map(Op::Done),
        1 => item.prop_map(Op::Forget),
        3 => (0u64..12).prop_map(Op::Advance),
        1 => Just(Op::ShutDown),
    ]
}

/// The limiter of the queue under test: 1 ms doubling per failure, at most 8 ms.
fn limiter_delay(failures: u32) -> u64 {
    (1u64 << failures.min(3)).min(8)
}

/// The priority queue's semantics: the basic queue's model with priorities for the ready and
/// in-flight items, plus the items waiting for their ready time (each with a priority), which
/// become ready (through its `add_with_priority`) when the clock reaches that time. An item is
/// ready or waiting, never both.
#[derive(Default)]
struct Model {
    queue: QueueModel,
    now: u64,
    seq: u64,
    /// item → (ready time in ms, sequence number of its latest move, priority)
    waiting: HashMap<u8, (u64, u64, i32)>,
    /// item → failures recorded by the limiter
    failures: HashMap<u8, u32>,
}

impl Model {
    /// A ready add: a waiting item stops waiting, keeping the higher priority.
    fn add(&mut self, item: u8, priority: i32) {
        if self.queue.is_shutting_down() {
            return;
        }
        let priority = match self.waiting.remove(&item) {
            Some((_, _, waited_with)) => priority.max(waited_with),
            None => priority,
        };
        self.queue.add_with_priority(item, priority);
    }

    fn add_after(&mut self, item: u8, priority: i32, ms: u64) {
        if self.queue.is_shutting_down() {
            return;
        }
        if ms == 0 {
            self.add(item, priority);
        } else if self.queue.is_ready(item) {
            // Stays ready; at most its priority rises.
            self.queue.add_with_priority(item, priority);
        } else {
            self.wait(item, self.now + ms, priority);
        }
    }

    fn add_rate_limited(&mut self, item: u8, priority: i32, cap: u64) {
        if self.queue.is_shutting_down() {
            return;
        }
        if self.queue.is_ready(item) {
            self.queue.add_with_priority(item, priority);
            return;
        }
        if let Some((_, _, waiting_with)) = self.waiting.get_mut(&item) {
            *waiting_with = (*waiting_with).max(priority);
            return;
        }
        let failures = self.failures.entry(item).or_default();
        let mut delay = limiter_delay(*failures);
        *failures += 1;
        if cap > 0 {
            delay = delay.min(cap);
        }
        self.wait(item, self.now + delay, priority);
    }

    /// Makes `item` wait until `at` with `priority`, keeping the earlier time and the higher
    /// priority if it already waits.
    fn wait(&mut self, item: u8, at: u64, priority: i32) {
        let seq = self.seq;
        match self.waiting.get_mut(&item) {
            Some((current, moved, waiting_with)) => {
                *waiting_with = (*waiting_with).max(priority);
                if at < *current {
                    *current = at;
                    *moved = seq;
                    self.seq += 1;
                }
            }
            None => {
                self.waiting.insert(item, (at, seq, priority));
                self.seq += 1;
            }
        }
    }

    fn advance(&mut self, ms: u64) {
        self.now += ms;
        let now = self.now;
        let mut due: Vec<(u64, u64, u8, i32)> = self
            .waiting
            .iter()
            .filter(|(_, (at, _, _))| *at <= now)
            .map(|(item, (at, seq, priority))| (*at, *seq, *item, *priority))
            .collect();
        due.sort_unstable();
        for (_, _, item, priority) in due {
            self.waiting.remove(&item);
            self.queue.add_with_priority(item, priority);
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

fn priority(index: usize) -> Result<Priority, TestCaseError> {
    let value = PRIORITIES.get(index).copied().unwrap_or_default();
    Priority::new(value).map_err(|error| TestCaseError::fail(error.to_string()))
}

async fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let queue = PriorityQueue::new(ItemExponentialFailure::new(
        Duration::from_millis(1),
        Duration::from_millis(8),
    ));
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Add(item, p) => {
                queue.add_with(item, AddOptions::new().priority(priority(p)?));
                model.add(item, PRIORITIES[p]);
            }
            Op::AddAfter(item, p, ms) => {
                let options = AddOptions::new()
                    .priority(priority(p)?)
                    .after(Duration::from_millis(ms));
                queue.add_with(item, options);
                model.add_after(item, PRIORITIES[p], ms);
            }
            Op::AddRateLimited(item, p) => {
                queue.add_with(
                    item,
                    AddOptions::new().priority(priority(p)?).rate_limited(),
                );
                model.add_rate_limited(item, PRIORITIES[p], 0);
            }
            Op::AddRateLimitedCapped(item, p, cap) => {
                let options = AddOptions::new()
                    .priority(priority(p)?)
                    .after(Duration::from_millis(cap))
                    .rate_limited();
                queue.add_with(item, options);
                model.add_rate_limited(item, PRIORITIES[p], cap);
            }
            // Polled once: a `get` that would wait is dropped, which must lose nothing.
            Op::Get => {
                let got = poll_once(queue.get_with_priority())
                    .map(|taken| taken.map(|(item, priority)| (item, priority.get())));
                prop_assert_eq!(got, model.queue.get_with_priority());
            }
            Op::Done(item) => {
                queue.done(&item);
                model.queue.done(item);
            }
            Op::Forget(item) => {
                queue.forget(&item);
                model.failures.remove(&item);
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
        prop_assert_eq!(queue.is_shutting_down(), model.queue.is_shutting_down());
        for item in 0..6u8 {
            prop_assert_eq!(queue.is_waiting(&item), model.waiting.contains_key(&item));
            let failures = model.failures.get(&item).copied().unwrap_or(0) as usize;
            prop_assert_eq!(queue.num_requeues(&item), failures);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn priority_queue_matches_the_model(ops in proptest::collection::vec(op(), 1..150)) {
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
