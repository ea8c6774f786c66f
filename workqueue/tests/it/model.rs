//! Model-based test: random operation sequences against a reference model of the queue's
//! documented semantics (client-go's, with a stray `done` ignored).

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use workqueue::Queue;

use crate::support::poll_once;

#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Get,
    Done(u8),
    Len,
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..8).prop_map(Op::Add),
        5 => Just(Op::Get),
        4 => (0u8..8).prop_map(Op::Done),
        1 => Just(Op::Len),
        1 => Just(Op::ShutDown),
    ]
}

/// The basic queue's documented semantics: the queued items in their order and client-go's
/// `dirty` and `processing` sets, here with the priority queue's priorities, which the plain
/// queue's model leaves all at 0 (one priority: first in, first out). The delaying and priority
/// queues' models build on it.
#[derive(Default)]
pub struct QueueModel {
    /// Queued items by (higher priority first, then order of queueing).
    queued: BTreeMap<(Reverse<i32>, u64), u8>,
    /// Where each queued item is in `queued`.
    position: HashMap<u8, (i32, u64)>,
    /// Items held by workers → the priority they are queued with again at `done`, if they were
    /// added meanwhile.
    processing: HashMap<u8, Option<i32>>,
    /// The next place in the order of queueing.
    next: u64,
    shutting_down: bool,
}

impl QueueModel {
    pub fn add(&mut self, item: u8) {
        self.add_with_priority(item, 0);
    }

    /// Adds `item` with `priority`: a waiting item keeps the higher of its priorities, a queued
    /// one whose priority rises goes to the back of its new priority.
    pub fn add_with_priority(&mut self, item: u8, priority: i32) {
        if self.shutting_down {
            return;
        }
        if let Some(again) = self.processing.get_mut(&item) {
            *again = Some(again.map_or(priority, |again| again.max(priority)));
            return;
        }
        match self.position.get(&item) {
            Some(&(current, _)) if current >= priority => {}
            Some(&(current, place)) => {
                self.queued.remove(&(Reverse(current), place));
                self.queue(item, priority);
            }
            None => self.queue(item, priority),
        }
    }

    fn queue(&mut self, item: u8, priority: i32) {
        let place = self.next;
        self.next += 1;
        self.queued.insert((Reverse(priority), place), item);
        self.position.insert(item, (priority, place));
    }

    /// Whether `item` waits for a worker: queued, or to be queued again at its `done`.
    pub fn is_ready(&self, item: u8) -> bool {
        self.position.contains_key(&item) || matches!(self.processing.get(&item), Some(Some(_)))
    }

    /// `None`: `get` would wait; `Some(None)`: shut down and empty.
    pub fn get(&mut self) -> Option<Option<u8>> {
        self.get_with_priority()
            .map(|taken| taken.map(|(item, _)| item))
    }

    /// [`get`](Self::get) with the priority the item was queued with.
    pub fn get_with_priority(&mut self) -> Option<Option<(u8, i32)>> {
        match self.queued.pop_first() {
            Some(((Reverse(priority), _), item)) => {
                self.position.remove(&item);
                self.processing.insert(item, None);
                Some(Some((item, priority)))
            }
            None if self.shutting_down => Some(None),
            None => None,
        }
    }

    pub fn done(&mut self, item: u8) {
        if let Some(Some(priority)) = self.processing.remove(&item) {
            self.queue(item, priority);
        }
    }

    pub fn shut_down(&mut self) {
        self.shutting_down = true;
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// How many items wait for a worker.
    pub fn len(&self) -> usize {
        self.queued.len()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn queue_matches_the_model(ops in proptest::collection::vec(op(), 1..200)) {
        let queue = Queue::new();
        let mut model = QueueModel::default();
        for op in ops {
            match op {
                Op::Add(item) => {
                    queue.add(item);
                    model.add(item);
                }
                // Polled once: a `get` that would wait is dropped, which must lose nothing.
                Op::Get => prop_assert_eq!(poll_once(queue.get()), model.get()),
                Op::Done(item) => {
                    queue.done(&item);
                    model.done(item);
                }
                Op::Len => prop_assert_eq!(queue.len(), model.len()),
                Op::ShutDown => {
                    queue.shut_down();
                    model.shut_down();
                }
            }
            prop_assert_eq!(queue.len(), model.len());
            prop_assert_eq!(queue.is_shutting_down(), model.is_shutting_down());
        }
    }
}
