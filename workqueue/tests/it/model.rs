//! Model-based test: random operation sequences against a reference model of the queue's
//! documented semantics (client-go's, with a stray `done` ignored).

use std::collections::{HashSet, VecDeque};

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

/// The basic queue's documented semantics: the FIFO of queued items and client-go's `dirty`
/// and `processing` sets. The delaying queue's model builds on it.
#[derive(Default)]
pub struct QueueModel {
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
    shutting_down: bool,
}

impl QueueModel {
    pub fn add(&mut self, item: u8) {
        if self.shutting_down || !self.dirty.insert(item) {
            return;
        }
        if !self.processing.contains(&item) {
            self.queue.push_back(item);
        }
    }

    /// `None`: `get` would wait; `Some(None)`: shut down and empty.
    pub fn get(&mut self) -> Option<Option<u8>> {
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

    pub fn done(&mut self, item: u8) {
        if self.processing.remove(&item) && self.dirty.contains(&item) {
            self.queue.push_back(item);
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
        self.queue.len()
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
