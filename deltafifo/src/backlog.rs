//! The optional bound on a fifo's backlog: a producer that asks waits while more keys are
//! queued than the bound allows, and the consumer wakes it once its pops bring the queue down
//! to half the bound (or the fifo closes), so that the producer then writes a run of objects
//! before it waits again rather than trading places with the consumer at every pop.
//!
//! Without a bound, a producer that outruns the consumer (a watch decoded on two threads into
//! a cache processed on one) queues every object it decodes: memory grows with the backlog, and
//! every queued object was written to fresh memory that the consumer reads back cold.

use std::sync::atomic::{AtomicUsize, Ordering, fence};

use tokio::sync::Notify;

/// The bound and the producers waiting for room under it.
pub(crate) struct Backlog {
    /// The most queued keys a waiting producer lets stand; `None`: unbounded.
    limit: Option<usize>,
    /// Producers waiting for room; the consumer looks only when some are.
    waiting: AtomicUsize,
    /// Wakes the waiting producers.
    room: Notify,
}

/// Counts a waiting producer for as long as it waits (also when its wait is dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Backlog {
    pub(crate) fn new(limit: Option<usize>) -> Self {
        Self {
            limit,
            waiting: AtomicUsize::new(0),
            room: Notify::new(),
        }
    }

    /// Whether `queued` keys exceed the bound.
    pub(crate) fn is_over(&self, queued: usize) -> bool {
        self.limit.is_some_and(|limit| queued > limit)
    }

    /// Whether a waiting producer may go on with `queued` keys queued: half the bound or fewer.
    fn has_room(&self, queued: usize) -> bool {
        self.limit.is_none_or(|limit| queued <= limit / 2)
    }

    /// Resolves at once when `queued()` is within the bound; otherwise once it is down to half
    /// the bound or `closed()` holds. `queued` must read the count the consumer publishes before
    /// it calls [`after_pop`](Self::after_pop).
    pub(crate) async fn wait_for_room(
        &self,
        queued: impl Fn() -> usize,
        closed: impl Fn() -> bool,
    ) {
        if !self.is_over(queued()) {
            return;
        }
        let _waiting = {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            Waiting(&self.waiting)
        };
        loop {
            let notified = self.room.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // Pairs with the fence in `after_pop`: either the consumer sees this producer
            // waiting, or this producer sees the count the consumer published.
            fence(Ordering::SeqCst);
            if self.has_room(queued()) || closed() {
                return;
            }
            notified.await;
        }
    }

    /// After a pop brought the queue to `queued` keys: wakes the waiting producers if that is
    /// down to half the bound.
    pub(crate) fn after_pop(&self, queued: usize) {
        if self.limit.is_none() {
            return;
        }
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 && self.has_room(queued) {
            self.room.notify_waiters();
        }
    }

    /// Wakes every waiting producer (the fifo closed).
    pub(crate) fn wake_all(&self) {
        self.room.notify_waiters();
    }
}
