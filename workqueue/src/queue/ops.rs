//! The operations every queue handle offers on its [`Shared`] state, whatever its
//! [`QueueState`]: add, get, done, length, shutdown and drain. [`Queue`](crate::Queue) and
//! [`PriorityQueue`](crate::PriorityQueue) are thin handles over these.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use crate::config::QueueConfig;
use crate::metrics::QueueMetrics;
use crate::queue::shared::{Effects, MetricsHook, Shared, refresh_unfinished};
use crate::queue::state::QueueState;
use crate::queue::store::Done;
use crate::task::LazyTask;

impl<S: QueueState> Shared<S, S::Entry> {
    /// A queue configured by `config` reporting to `sink` (already made from `config`).
    pub(crate) fn open(config: &QueueConfig, sink: Option<Arc<dyn QueueMetrics>>) -> Arc<Self> {
        let metrics = sink.map(|sink| MetricsHook {
            sink,
            refresh: LazyTask::new(config.runtime.clone()),
        });
        let name = config.name.clone().map(String::into_boxed_str);
        let shared = Arc::new(Self::new(name, metrics));
        ensure_refresh(&shared);
        shared
    }

    /// Adds `entry` without ever waiting for the lock: if the queue is busy, the entry is left
    /// for the thread that holds it.
    #[inline]
    pub(crate) fn add(&self, entry: S::Entry) {
        let Some(mut state) = self.state.try_lock() else {
            self.add_busy(entry);
            return;
        };
        let mut adds = S::Adds::default();
        self.move_inbox(&mut state, &mut adds);
        state.add(entry, &mut adds);
        self.unlock_and_report(state, adds);
    }

    /// Adds every entry under one lock.
    pub(crate) fn add_all(&self, entries: impl Iterator<Item = S::Entry>) {
        let mut state = self.state.lock();
        let mut adds = S::Adds::default();
        self.move_inbox(&mut state, &mut adds);
        for entry in entries {
            state.add(entry, &mut adds);
        }
        self.unlock_and_report(state, adds);
    }

    /// Waits for an item and hands it out; `None` once shutting down and empty.
    /// Cancel-safe, and takes part in tokio's cooperative scheduling.
    pub(crate) async fn get(self: &Arc<Self>) -> Option<S::Taken> {
        self.get_with(|| {}, |taken| taken).await
    }

    /// [`get`](Self::get) that first calls `start` (when the future first runs) and hands the
    /// item out as `hand_out` makes it: a handle's `get` is then this one future, with no
    /// second state machine around it.
    #[inline]
    pub(crate) async fn get_with<R>(
        self: &Arc<Self>,
        start: impl FnOnce(),
        hand_out: impl FnOnce(S::Taken) -> R,
    ) -> Option<R> {
        start();
        tokio::task::coop::consume_budget().await;
        ensure_refresh(self);
        let mut state = self.state.lock();
        let mut adds = S::Adds::default();
        self.move_inbox(&mut state, &mut adds);
        // The item goes straight from the store to the caller, not re-wrapped on the way:
        // every move of a fresh value between differently shaped enums costs a stall.
        let mut queued_for = None;
        let taken = state.store.take(&mut queued_for);
        let closed = state.shutting_down;
        // Pass the baton: more work and a sleeping worker means wake it.
        self.unlock_and_report(state, adds);
        if let Some(taken) = taken {
            self.report_get(&taken, queued_for);
            return Some(hand_out(taken));
        }
        if closed {
            return None;
        }
        self.wait_for_item().await.map(hand_out)
    }

    /// Marks `item` as processed by the worker that got it; ignored if it is not in flight.
    pub(crate) fn done(&self, item: &S::Item) {
        let mut state = self.state.lock();
        let mut adds = S::Adds::default();
        self.move_inbox(&mut state, &mut adds);
        let (done, worked_for) = state.store.done(item);
        let drained = done != Done::Stray && state.draining && state.store.is_empty();
        self.unlock_and_report(state, adds);
        if done == Done::Stray {
            tracing::debug!(
                queue = self.name.as_deref(),
                "done for an item that is not being processed: ignored"
            );
            return;
        }
        if drained {
            self.drained.notify_waiters();
        }
        if let (Some(metrics), Some(worked_for)) = (&self.metrics, worked_for) {
            metrics.sink.done(worked_for);
        }
    }

    /// The number of items waiting for a worker (not counting items being processed).
    pub(crate) fn len(&self) -> usize {
        let mut state = self.state.lock();
        let mut adds = S::Adds::default();
        let moved = self.move_inbox(&mut state, &mut adds);
        let len = state.store.queued();
        let wake = moved && self.should_wake(&state);
        drop(state);
        self.report(Effects { adds, wake });
        len
    }

    /// Whether a shutdown was asked for.
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    /// Stops accepting adds; workers still get what is queued, then `None`.
    pub(crate) fn shut_down(&self) {
        let effects = self.close(false);
        self.report(effects);
        self.sleepers.wake_all();
        self.drained.notify_waiters();
    }

    /// Stops accepting adds at once, then returns the wait until everything queued and in
    /// flight is done.
    pub(crate) fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send + '_ {
        let effects = self.close(true);
        self.report(effects);
        self.sleepers.wake_all();
        async move {
            loop {
                let mut notified = pin!(self.drained.notified());
                notified.as_mut().enable();
                {
                    let state = self.state.lock();
                    if !state.draining || state.store.is_empty() {
                        return;
                    }
                }
                notified.as_mut().await;
            }
        }
    }
}

/// Starts the task that refreshes the unfinished-work gauges of a queue with metrics.
fn ensure_refresh<S: QueueState>(shared: &Arc<Shared<S, S::Entry>>) {
    if let Some(metrics) = &shared.metrics {
        let weak = Arc::downgrade(shared);
        metrics.refresh.ensure(|| refresh_unfinished(weak));
    }
}
