//! [`PopSignal`]: how a pop that found its fifo empty waits for work, and how producers wake it.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::cache_line::OwnCacheLine;

/// How often an idle pop yields and looks again before it parks.
const IDLE_POLLS_BEFORE_PARKING: u32 = 16;

/// The wake-up between producers and parked pops.
pub(crate) struct PopSignal {
    /// Wakes a parked pop when work is queued or the fifo closes.
    item_ready: Notify,
    /// How many pops are parked on `item_ready`; producers notify only when some are, which
    /// keeps the notifier's cache line out of the hot path of a steady stream.
    parked: OwnCacheLine<AtomicUsize>,
}

/// Counts a parked pop for as long as it lives (also when the pop is cancelled while parked).
struct ParkedPop<'a>(&'a AtomicUsize);

impl<'a> ParkedPop<'a> {
    fn enter(parked: &'a AtomicUsize) -> Self {
        parked.fetch_add(1, Ordering::SeqCst);
        Self(parked)
    }
}

impl Drop for ParkedPop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl PopSignal {
    pub(crate) fn new() -> Self {
        Self {
            item_ready: Notify::new(),
            parked: OwnCacheLine(AtomicUsize::new(0)),
        }
    }

    /// Wakes one parked pop, if any, after work was queued.
    pub(crate) fn wake_one(&self) {
        if self.parked.load(Ordering::SeqCst) > 0 {
            self.item_ready.notify_one();
        }
    }

    /// Wakes every parked pop (the fifo closed).
    pub(crate) fn wake_all(&self) {
        self.item_ready.notify_waiters();
    }

    /// Waits until `take` returns something. `take` looks for work and takes it (`None` when
    /// there is none yet); `has_work` is a cheap hint, read without locks, that there may be.
    ///
    /// A busy producer usually queues more within microseconds, so an idle pop first yields to
    /// the runtime a few times before it parks: a steady stream does not cost a thread wake-up
    /// per item.
    pub(crate) async fn wait<T>(
        &self,
        mut take: impl FnMut() -> Option<T>,
        has_work: impl Fn() -> bool,
    ) -> T {
        let mut idle_polls = 0;
        loop {
            // Fast path: take work without registering as a waiter.
            if let Some(taken) = take() {
                return taken;
            }
            if idle_polls < IDLE_POLLS_BEFORE_PARKING {
                idle_polls += 1;
                tokio::task::yield_now().await;
                while idle_polls < IDLE_POLLS_BEFORE_PARKING && !has_work() {
                    idle_polls += 1;
                    tokio::task::yield_now().await;
                }
                continue;
            }
            // Count ourselves as parked before the last look, so that a producer queueing after
            // that look sees the count and wakes us (both sides use SeqCst).
            let _parked = ParkedPop::enter(&self.parked);
            let mut ready = pin!(self.item_ready.notified());
            ready.as_mut().enable();
            if let Some(taken) = take() {
                return taken;
            }
            ready.await;
        }
    }
}
