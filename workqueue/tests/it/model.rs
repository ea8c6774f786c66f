//! Model-based test: random operation sequences against a reference model of the queue's
//! documented semantics (client-go's, with a stray `done` ignored).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use proptest::prelude::*;
use workqueue::Queue;

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

#[derive(Default)]
struct Model {
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

    /// `None`: `get` would wait; `Some(None)`: shut down and empty.
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

/// Polls `get` once: `None` if it would wait (the future is then dropped, which must lose
/// nothing).
fn poll_get(queue: &Queue<u8>) -> Option<Option<u8>> {
    let mut get = pin!(queue.get());
    match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(item) => Some(item),
        Poll::Pending => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn queue_matches_the_model(ops in proptest::collection::vec(op(), 1..200)) {
        let queue = Queue::new();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Add(item) => {
                    queue.add(item);
                    model.add(item);
                }
                Op::Get => prop_assert_eq!(poll_get(&queue), model.get()),
                Op::Done(item) => {
                    queue.done(&item);
                    model.done(item);
                }
                Op::Len => prop_assert_eq!(queue.len(), model.queue.len()),
                Op::ShutDown => {
                    queue.shut_down();
                    model.shutting_down = true;
                }
            }
            prop_assert_eq!(queue.len(), model.queue.len());
            prop_assert_eq!(queue.is_shutting_down(), model.shutting_down);
        }
    }
}
