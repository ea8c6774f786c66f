//! One processor listener per handler: an unbounded buffer drained by the handler's own task
//! (client-go's `processorListener`).

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::event::Event;
use crate::handler::ResourceEventHandler;

/// A listener's backlog is logged when it reaches this size, and again at every doubling.
const BACKLOG_WARNING: usize = 1024;

/// The state of a listener that its registration, the processor and its task share.
#[derive(Debug)]
pub(crate) struct ListenerState {
    name: String,
    /// Notifications sent and not yet taken by the task.
    buffered: AtomicUsize,
    /// Initial-list adds sent and not yet returned from the handler.
    initial_pending: AtomicUsize,
    initial_done: Notify,
    /// Set on removal: the task drops what is still buffered.
    removed: AtomicBool,
    /// Cancelled once the task has ended (or, for a never started listener, on removal).
    finished: CancellationToken,
}

impl ListenerState {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn buffered(&self) -> usize {
        self.buffered.load(Ordering::Relaxed)
    }

    /// Whether every initial-list add sent so far has returned from the handler.
    pub(crate) fn initial_adds_returned(&self) -> bool {
        self.initial_pending.load(Ordering::Acquire) == 0
    }

    /// Waits until [`initial_adds_returned`](Self::initial_adds_returned).
    pub(crate) async fn wait_initial_adds_returned(&self) {
        loop {
            let mut done = pin!(self.initial_done.notified());
            done.as_mut().enable();
            if self.initial_adds_returned() {
                return;
            }
            done.await;
        }
    }

    pub(crate) fn is_removed(&self) -> bool {
        self.removed.load(Ordering::Acquire)
    }

    /// Waits until the listener's task has ended: no handler call is in flight any more.
    pub(crate) async fn finished(&self) {
        self.finished.cancelled().await;
    }

    fn initial_add_returned(&self) {
        if self.initial_pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.initial_done.notify_waiters();
        }
    }
}

/// The sending side of a listener, kept by the processor.
pub(crate) struct Listener<K> {
    /// Batches of events: a batch popped from the fifo reaches the handler's task in one
    /// hand-off (one wake-up).
    tx: mpsc::UnboundedSender<Vec<Event<K>>>,
    state: Arc<ListenerState>,
    /// The task, until the processor starts it.
    task: Option<BoxFuture<'static, ()>>,
}

impl<K: Send + Sync + 'static> Listener<K> {
    /// A listener for `handler`, with its task built but not started.
    pub(crate) fn new<H: ResourceEventHandler<K>>(handler: H) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(ListenerState {
            name: handler.name().to_owned(),
            buffered: AtomicUsize::new(0),
            initial_pending: AtomicUsize::new(0),
            initial_done: Notify::new(),
            removed: AtomicBool::new(false),
            finished: CancellationToken::new(),
        });
        let task = run(handler, rx, Arc::clone(&state)).boxed();
        Self {
            tx,
            state,
            task: Some(task),
        }
    }
}

impl<K> Listener<K> {
    pub(crate) fn state(&self) -> &Arc<ListenerState> {
        &self.state
    }

    /// Buffers `events` for the handler, in one hand-off; never waits.
    pub(crate) fn send(&self, events: Vec<Event<K>>) {
        let count = events.len();
        if count == 0 {
            return;
        }
        let initial = events.iter().filter(|event| event.is_initial_add()).count();
        if initial > 0 {
            self.state
                .initial_pending
                .fetch_add(initial, Ordering::AcqRel);
        }
        let before = self.state.buffered.fetch_add(count, Ordering::Relaxed);
        let backlog = before + count;
        // Warn when the backlog passes a power of two, from 1 024 on.
        if backlog >= BACKLOG_WARNING && backlog.ilog2() > before.max(1).ilog2() {
            tracing::warn!(
                handler = %self.state.name,
                backlog,
                "event handler is falling behind; its buffer grows until it catches up"
            );
        }
        if self.tx.send(events).is_err() {
            // The task is gone (removed or stopped): nobody will take them.
            self.state.buffered.fetch_sub(count, Ordering::Relaxed);
            for _ in 0..initial {
                self.state.initial_add_returned();
            }
        }
    }

    /// Starts the handler's task, once.
    pub(crate) fn start(&mut self) {
        if let Some(task) = self.task.take() {
            tokio::spawn(task);
        }
    }

    /// Stops the listener: buffered notifications are dropped, an in-flight call completes.
    /// Dropping the listener afterwards closes its buffer.
    pub(crate) fn remove(&mut self) {
        self.state.removed.store(true, Ordering::Release);
        if self.task.take().is_some() {
            // Never started: there is no call to wait for.
            self.state.finished.cancel();
        }
    }
}

async fn run<K, H>(
    handler: H,
    mut rx: mpsc::UnboundedReceiver<Vec<Event<K>>>,
    state: Arc<ListenerState>,
) where
    K: Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    let _finished = state.finished.clone().drop_guard();
    'batches: while let Some(events) = rx.recv().await {
        for event in events {
            state.buffered.fetch_sub(1, Ordering::Relaxed);
            if state.is_removed() {
                break 'batches;
            }
            let initial = event.is_initial_add();
            let call = AssertUnwindSafe(handler.on_event(event)).catch_unwind();
            if let Err(panic) = call.await {
                tracing::error!(
                    handler = %state.name,
                    panic = panic_message(panic.as_ref()),
                    "event handler panicked; the notification is skipped and the handler keeps receiving"
                );
            }
            if initial {
                state.initial_add_returned();
            }
        }
    }
    tracing::debug!(handler = %state.name, "listener stopped");
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "<non-string panic payload>"
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::FifoKind;
    use crate::testing::on_both_fifos;
    use crate::testing::{Event, Harness, LogCapture, Recorder, cm, eventually};

    fn adds(names: impl IntoIterator<Item = usize>) -> Vec<Event> {
        names
            .into_iter()
            .map(|i| Event::Add(format!("o{i}"), "1".into(), false))
            .collect()
    }

    async fn a_stuck_handler_delays_neither_the_fifo_nor_other_handlers(kind: FifoKind) {
        let mut h = Harness::new(kind, Duration::ZERO);
        let fast = Recorder::new("fast");
        let (slow, gate) = Recorder::new("slow").gated();
        h.add(fast.clone(), Duration::ZERO);
        let slow_registration = h.add(slow.clone(), Duration::ZERO);
        h.start();
        for i in 0..100 {
            h.fifo.add(cm(&format!("o{i}"), "1")).unwrap();
        }
        eventually("fast handler has everything", || fast.events().len() == 100).await;
        eventually("fifo drained", || h.fifo.is_empty()).await;
        assert!(slow.events().is_empty());
        // One notification is in the stuck call, the rest wait in the slow handler's buffer.
        assert_eq!(slow_registration.buffered(), 99);
        let buffers = h.processor.buffer_lengths();
        assert_eq!(buffers.iter().find(|b| b.handler == "fast").unwrap().len, 0);
        assert_eq!(
            buffers.iter().find(|b| b.handler == "slow").unwrap().len,
            99
        );

        gate.add_permits(100);
        eventually("slow handler caught up", || slow.events().len() == 100).await;
        assert_eq!(slow.events(), adds(0..100));
        assert_eq!(fast.events(), adds(0..100));
        h.stop().await;
    }

    on_both_fifos!(a_stuck_handler_delays_neither_the_fifo_nor_other_handlers);

    async fn a_panicking_handler_keeps_receiving_and_others_are_unaffected(kind: FifoKind) {
        let logs = LogCapture::default();
        let _logging = tracing::subscriber::set_default(logs.clone());
        let mut h = Harness::new(kind, Duration::ZERO);
        let fragile = Recorder::new("fragile").panic_on_add("o1");
        let other = Recorder::new("other");
        h.add(fragile.clone(), Duration::ZERO);
        h.add(other.clone(), Duration::ZERO);
        h.start();
        for i in 0..3 {
            h.fifo.add(cm(&format!("o{i}"), "1")).unwrap();
        }
        eventually("every event", || {
            other.events().len() == 3 && fragile.events().len() == 2
        })
        .await;
        assert_eq!(fragile.events(), adds([0, 2]));
        assert_eq!(other.events(), adds(0..3));
        // The panic is logged as an error naming the handler, with the panic's message.
        let panics: Vec<String> = logs
            .lines()
            .into_iter()
            .filter(|line| line.contains("panicked"))
            .collect();
        assert_eq!(panics.len(), 1, "{panics:?}");
        assert!(panics[0].starts_with("ERROR"), "{}", panics[0]);
        assert!(panics[0].contains("handler=fragile"), "{}", panics[0]);
        assert!(
            panics[0].contains("fragile refuses to add o1"),
            "{}",
            panics[0]
        );
        h.stop().await;
    }

    on_both_fifos!(a_panicking_handler_keeps_receiving_and_others_are_unaffected);

    async fn removal_drops_the_buffer_and_the_async_variant_waits_for_the_call_in_flight(
        kind: FifoKind,
    ) {
        let mut h = Harness::new(kind, Duration::ZERO);
        let (slow, gate) = Recorder::new("slow").gated();
        let registration = h.add(slow.clone(), Duration::ZERO);
        h.start();
        for i in 0..3 {
            h.fifo.add(cm(&format!("o{i}"), "1")).unwrap();
        }
        eventually("first call in flight", || registration.buffered() == 2).await;

        assert!(h.processor.remove(registration.listener_id));
        assert!(registration.is_removed());
        let listener = registration.listener.clone();
        let mut finished = tokio::spawn(async move { listener.finished().await });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(
            !finished.is_finished(),
            "the call in flight has not returned yet"
        );
        gate.add_permits(10);
        (&mut finished).await.unwrap();
        // The call in flight completed; what was buffered behind it was dropped.
        assert_eq!(slow.events(), adds([0]));
        // Removing again is a no-op.
        assert!(!h.processor.remove(registration.listener_id));
        h.fifo.add(cm("later", "1")).unwrap();
        eventually("fifo drained", || h.fifo.is_empty()).await;
        assert_eq!(slow.events(), adds([0]));
        h.stop().await;
    }

    on_both_fifos!(removal_drops_the_buffer_and_the_async_variant_waits_for_the_call_in_flight);

    async fn registration_syncs_after_its_initial_adds_returned(kind: FifoKind) {
        let mut h = Harness::new(kind, Duration::ZERO);
        h.start();
        h.fifo
            .replace(
                (0..5).map(|i| cm(&format!("o{i}"), "1")).collect(),
                "1".into(),
            )
            .unwrap();
        eventually("fifo synced", || h.fifo.has_synced()).await;

        let (late, gate) = Recorder::new("late").gated();
        let registration = h.add(late.clone(), Duration::ZERO);
        let waiter = tokio::spawn({
            let registration = registration.clone();
            async move { registration.synced().await }
        });
        gate.add_permits(4);
        eventually("four initial adds", || late.events().len() == 4).await;
        assert!(!registration.has_synced());
        assert!(!waiter.is_finished());
        gate.add_permits(1);
        waiter.await.unwrap();
        assert!(registration.has_synced());
        assert!(
            late.events()
                .iter()
                .all(|e| matches!(e, Event::Add(_, _, true)))
        );
        h.stop().await;
    }

    on_both_fifos!(registration_syncs_after_its_initial_adds_returned);
}
