//! Debounce ([`ControllerBuilder::debounce`](crate::controller::ControllerBuilder::debounce)): a key's
//! events are held until none came for it for a quiet time, then its key goes to the queue
//! once, with the highest priority among them; a key whose events never stop is still handed
//! over a maximum wait after its first held event.
//!
//! One task per controller releases the held keys when they are due; each held key has one
//! entry in a min-heap of due times (an event pushes the key's due time later, never earlier,
//! so the entry is moved only when it surfaces), and the task sleeps until the earliest.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use indexer::ObjectKey;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workqueue::Priority;

use crate::controller::enqueue::KeySink;

/// A controller's debounce settings, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Debounce {
    /// How long a key's events must pause before it is reconciled.
    quiet: Duration,
    /// The longest a key is held after its first held event.
    max_wait: Duration,
}

impl Debounce {
    /// Checks the settings: `quiet` above zero, `max_wait` at least `quiet`.
    pub(crate) fn new(quiet: Duration, max_wait: Duration) -> Result<Self, String> {
        if quiet.is_zero() {
            return Err(
                "debounce: the quiet time must be above zero (leave debounce off to \
                        reconcile every event at once)"
                    .to_owned(),
            );
        }
        if max_wait < quiet {
            return Err(format!(
                "debounce: the maximum wait ({max_wait:?}) must be at least the quiet time \
                 ({quiet:?})"
            ));
        }
        Ok(Self { quiet, max_wait })
    }
}

/// Holds event keys until they are due, then adds them to the controller's queue.
pub(crate) struct Debouncer {
    settings: Debounce,
    queue: KeySink,
    held: Mutex<Held>,
    /// Wakes the task: a key was held that may be due before its sleep ends.
    wake: Notify,
}

#[derive(Default)]
struct Held {
    keys: HashMap<ObjectKey, HeldKey>,
    /// One entry per held key: a due time no later than the key's own.
    due: BinaryHeap<Reverse<(Instant, ObjectKey)>>,
}

struct HeldKey {
    first: Instant,
    due: Instant,
    priority: Priority,
}

impl Debouncer {
    /// A debouncer handing due keys to `queue`.
    pub(crate) fn new(settings: Debounce, queue: KeySink) -> Self {
        Self {
            settings,
            queue,
            held: Mutex::new(Held::default()),
            wake: Notify::new(),
        }
    }

    /// An event for `key` with `priority`: the key is held (again) for the quiet time, but no
    /// longer than the maximum wait after its first held event.
    pub(crate) fn push(&self, key: ObjectKey, priority: Priority) {
        let now = Instant::now();
        let quiet_until = later(now, self.settings.quiet);
        let mut held = self.held.lock();
        if let Some(waiting) = held.keys.get_mut(&key) {
            waiting.due = quiet_until.min(later(waiting.first, self.settings.max_wait));
            waiting.priority = waiting.priority.max(priority);
            return;
        }
        held.due.push(Reverse((quiet_until, key.clone())));
        held.keys.insert(
            key,
            HeldKey {
                first: now,
                due: quiet_until,
                priority,
            },
        );
        drop(held);
        self.wake.notify_one();
    }

    /// The debounce task: releases due keys until `shutdown`; keys still held then are
    /// dropped, as the queue's waiting items are at shutdown.
    pub(crate) async fn run(&self, shutdown: CancellationToken) {
        loop {
            let next = self.release_due(Instant::now());
            let sleep = async {
                match next {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.wake.notified() => {}
                () = sleep => {}
            }
        }
    }

    /// Adds every key due at `now` to the queue; returns the earliest remaining due time.
    fn release_due(&self, now: Instant) -> Option<Instant> {
        let mut released = Vec::new();
        let next = {
            let mut held = self.held.lock();
            while let Some(Reverse((at, _))) = held.due.peek()
                && *at <= now
            {
                let Some(Reverse((_, key))) = held.due.pop() else {
                    break;
                };
                match held.keys.get(&key).map(|waiting| waiting.due) {
                    Some(due) if due <= now => {
                        if let Some(waiting) = held.keys.remove(&key) {
                            released.push((key, waiting.priority));
                        }
                    }
                    // Events came meanwhile: due later.
                    Some(due) => held.due.push(Reverse((due, key))),
                    None => {}
                }
            }
            held.due.peek().map(|Reverse((at, _))| *at)
        };
        for (key, priority) in released {
            self.queue.add(key, priority);
        }
        next
    }
}

/// `at + delay`, saturating about 30 years ahead.
fn later(at: Instant, delay: Duration) -> Instant {
    at.checked_add(delay)
        .or_else(|| at.checked_add(Duration::from_secs(86_400 * 365 * 30)))
        .unwrap_or(at)
}
