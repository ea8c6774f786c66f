//! The timer task of the queues with waiting items ([`DelayingQueue`](crate::DelayingQueue),
//! [`PriorityQueue`](crate::PriorityQueue)): one task with one timer per queue, re-armed to the
//! earliest ready time, that makes waiting items ready when they are due.
//!
//! The task is the same for both queues; what it drives is a [`Timed`] queue, which says how
//! to take the due items out of its waiting set (under that set's lock) and how to make them
//! ready.

use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How far in the future a delay that overflows the clock is scheduled (about 30 years).
pub(crate) const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The ready time of an item added now with `delay`, saturating far in the future.
pub(crate) fn ready_at(delay: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(delay)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// How long before an item's ready time the timer task stops sleeping and starts polling the
/// clock instead. tokio's timer has a resolution of 1 ms: it rounds a
/// deadline up to the next millisecond and may wake up to another millisecond after that, so
/// sleeping until the ready time itself would deliver about 1 ms late on average and up to
/// 2 ms late.
const POLL_WINDOW: Duration = Duration::from_millis(1);

/// The longest the timer task polls in a row, measured on the real clock. It bounds the CPU
/// spent polling (about one millisecond per wake-up at most), and it keeps tests with a paused
/// tokio clock (where polling would never see time pass) moving: the task then sleeps.
const MAX_POLL: Duration = Duration::from_millis(2);

/// What the timer task is doing, as far as insertions are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerState {
    /// Waiting for a wake-up only (nothing waiting, or the task has not started yet).
    Idle,
    /// Sleeping until this ready time.
    Sleeping(Instant),
    /// Woken or about to look at the heap: it will see every item inserted meanwhile.
    Running,
}

/// What the timer task does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Nothing waits: wait for a wake-up.
    Idle,
    /// The earliest item is due at this instant, within [`POLL_WINDOW`]: watch the clock,
    /// yielding to other tasks between looks.
    Poll(Instant),
    /// Sleep until this instant (or a wake-up).
    Sleep(Instant),
}

impl Next {
    /// The timer's state while it does this, as insertions see it.
    pub(crate) fn timer_state(self) -> TimerState {
        match self {
            Next::Idle => TimerState::Idle,
            Next::Poll(deadline) | Next::Sleep(deadline) => TimerState::Sleeping(deadline),
        }
    }
}

/// How the timer task decides what to do next: from whether any item was due, the earliest
/// remaining ready time and the time it looked.
pub(crate) type Plan<'a> = dyn FnMut(bool, Option<Instant>, Instant) -> Next + 'a;

/// A queue whose waiting items the timer task makes ready.
pub(crate) trait Timed: Send + Sync + 'static {
    /// A due item, as taken out of the waiting set.
    type Due: Send;

    /// Under the lock of the waiting items: `None` once they are closed (the task ends);
    /// otherwise moves the items due now into `due` and returns what `plan` decides (from
    /// whether any item was due, the earliest remaining ready time and the time it looked),
    /// recorded as the timer's state so that later insertions know whether to wake the task.
    fn take_due(&self, due: &mut Vec<Self::Due>, plan: &mut Plan<'_>) -> Option<Next>;

    /// Makes the items of `due` ready, leaving it empty.
    fn release(&self, due: &mut Vec<Self::Due>);
}

/// The single timer task of a queue: makes due items ready, sleeping until shortly before the
/// earliest ready time (then polling the clock for the rest, see [`POLL_WINDOW`]) or until
/// woken by an earlier item, a shutdown or the drop of the queue. Holds the queue only weakly:
/// ends when it is dropped or closed.
pub(crate) async fn run_timer<Q: Timed>(weak: Weak<Q>, wake: Arc<Notify>) {
    let mut sleep = pin!(tokio::time::sleep_until(Instant::now()));
    let mut due = Vec::new();
    let mut polling_since: Option<std::time::Instant> = None;
    loop {
        let next = {
            let Some(queue) = weak.upgrade() else {
                return;
            };
            let mut plan = |released: bool, earliest: Option<Instant>, now: Instant| match earliest
            {
                None => Next::Idle,
                Some(at) => {
                    if released {
                        polling_since = None;
                    }
                    let near = at.saturating_duration_since(now) <= POLL_WINDOW;
                    let may_poll = polling_since
                        .get_or_insert_with(std::time::Instant::now)
                        .elapsed()
                        < MAX_POLL;
                    if near && may_poll {
                        Next::Poll(at)
                    } else if near {
                        Next::Sleep(at)
                    } else {
                        Next::Sleep(at.checked_sub(POLL_WINDOW).unwrap_or(at))
                    }
                }
            };
            // `notify_one` keeps a permit if the task is not waiting yet, so a wake-up from an
            // insertion after `take_due` is not lost however late the task starts waiting.
            let Some(next) = queue.take_due(&mut due, &mut plan) else {
                return;
            };
            if !due.is_empty() {
                queue.release(&mut due);
            }
            next
        };
        match next {
            Next::Idle => {
                polling_since = None;
                wake.notified().await;
            }
            Next::Poll(at) => {
                // Watch the clock without taking the lock (adds keep using it meanwhile); an
                // add of an earlier item wakes `notified` and ends the watch.
                let mut notified = pin!(wake.notified());
                notified.as_mut().enable();
                loop {
                    tokio::task::yield_now().await;
                    let timed_out = polling_since.is_some_and(|since| since.elapsed() >= MAX_POLL);
                    if Instant::now() >= at || timed_out || notified_now(notified.as_mut()) {
                        break;
                    }
                }
            }
            Next::Sleep(deadline) => {
                polling_since = None;
                sleep.as_mut().reset(deadline);
                tokio::select! {
                    () = &mut sleep => {}
                    () = wake.notified() => {}
                }
            }
        }
    }
}

/// Whether `notified` has completed (without waiting).
fn notified_now(notified: std::pin::Pin<&mut tokio::sync::futures::Notified<'_>>) -> bool {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    notified.poll(&mut cx).is_ready()
}
