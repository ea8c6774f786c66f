//! The shared processor: the set of listeners an informer fans notifications out to, their
//! resync schedule, and their lifecycle (client-go's `sharedProcessor`).

use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use parking_lot::{Mutex, MutexGuard};
use tokio::time::Instant;

use crate::Error;
use crate::event::Event;
use crate::handler::ResourceEventHandler;
use crate::listener::{Listener, ListenerState};
use crate::resync::ResyncRules;

/// Where an informer is in its one-shot life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    NotStarted,
    Running,
    Stopped,
}

/// The listeners of one informer. Its lock is client-go's `blockDeltas`: the informer holds it
/// while it applies a key's deltas to the cache and distributes them, and a handler joining a
/// running informer holds it while it snapshots the cache, so the newcomer sees neither a gap nor
/// a duplicate.
pub(crate) struct Processor<K> {
    state: Mutex<State<K>>,
    /// The period a handler gets when it does not ask for one.
    default_resync: Duration,
}

pub(crate) struct State<K> {
    phase: Phase,
    rules: ResyncRules,
    entries: Vec<Entry<K>>,
    next_id: u64,
}

struct Entry<K> {
    id: u64,
    listener: Listener<K>,
    /// The admitted request (0 = never).
    requested: Duration,
    /// The effective period (0 = never).
    period: Duration,
    next_resync: Instant,
    /// Whether sync notifications (updates with equal resource versions) reach this listener.
    syncing: bool,
}

/// A listener's buffer length, for metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerBuffer {
    /// The handler's [`name`](crate::ResourceEventHandler::name).
    pub handler: String,
    /// Notifications waiting for the handler.
    pub len: usize,
}

impl<K: Send + Sync + 'static> Processor<K> {
    /// A processor whose handlers resync every `default_resync` unless they ask otherwise.
    pub(crate) fn new(default_resync: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                phase: Phase::NotStarted,
                rules: ResyncRules {
                    check_period: default_resync,
                },
                entries: Vec::new(),
                next_id: 0,
            }),
            default_resync,
        }
    }

    /// Locks the listener set for distributing notifications.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock()
    }

    /// Registers `handler`, resyncing every `requested` (0 = never). On a running informer the
    /// handler first gets `snapshot()` (taken under the lock: keys and objects) as initial-list
    /// adds.
    pub(crate) fn add<H: ResourceEventHandler<K>>(
        &self,
        handler: H,
        requested: Duration,
        snapshot: impl FnOnce() -> Vec<(ObjectKey, Arc<K>)>,
    ) -> Result<(u64, Arc<ListenerState>), Error> {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let started = match state.phase {
            Phase::NotStarted => false,
            Phase::Running => true,
            Phase::Stopped => return Err(Error::Stopped),
        };
        let admitted = state.rules.admit(requested, started);
        if admitted.lowered_check_period {
            for entry in &mut state.entries {
                entry.period = state.rules.effective(entry.requested);
            }
        }
        let period = state.rules.effective(admitted.requested);
        let mut listener = Listener::new(handler);
        if started {
            let adds = snapshot()
                .into_iter()
                .map(|(key, obj)| Event::added(key, obj, true))
                .collect();
            listener.send(adds);
            listener.start();
        }
        let id = state.next_id;
        state.next_id += 1;
        let listener_state = Arc::clone(listener.state());
        state.entries.push(Entry {
            id,
            listener,
            requested: admitted.requested,
            period,
            next_resync: Instant::now() + period,
            syncing: true,
        });
        Ok((id, listener_state))
    }

    /// Unregisters listener `id`: its buffered notifications are dropped; a call in flight
    /// completes. Returns whether it was registered.
    pub(crate) fn remove(&self, id: u64) -> bool {
        let removed = {
            let mut state = self.state.lock();
            let position = state.entries.iter().position(|entry| entry.id == id);
            position.map(|position| state.entries.swap_remove(position))
        };
        match removed {
            Some(mut entry) => {
                entry.listener.remove();
                true
            }
            None => false,
        }
    }

    /// Marks the listeners due for a resync (only they get sync notifications until the next
    /// check) and schedules their next one; true if any is due.
    pub(crate) fn should_resync(&self) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock();
        let mut any = false;
        for entry in &mut state.entries {
            entry.syncing = !entry.period.is_zero() && now >= entry.next_resync;
            if entry.syncing {
                entry.next_resync = now + entry.period;
                any = true;
            }
        }
        any
    }

    /// Starts every listener's task; later listeners start as they are added. Returns the resync
    /// check period (0 = never) for the reflector, or `None` when already started or stopped.
    pub(crate) fn start(&self) -> Option<Duration> {
        let mut state = self.state.lock();
        if state.phase != Phase::NotStarted {
            return None;
        }
        state.phase = Phase::Running;
        for entry in &mut state.entries {
            entry.listener.start();
        }
        Some(state.rules.check_period)
    }

    /// Stops for good: every listener drops what it has buffered; waits until in-flight handler
    /// calls have returned.
    pub(crate) async fn stop(&self) {
        let entries = {
            let mut state = self.state.lock();
            state.phase = Phase::Stopped;
            std::mem::take(&mut state.entries)
        };
        let mut finished = Vec::with_capacity(entries.len());
        for mut entry in entries {
            entry.listener.remove();
            finished.push(Arc::clone(entry.listener.state()));
            // Dropping the listener closes its buffer, which ends an idle task.
        }
        for listener in finished {
            listener.finished().await;
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.state.lock().phase
    }

    pub(crate) fn default_resync(&self) -> Duration {
        self.default_resync
    }

    pub(crate) fn buffer_lengths(&self) -> Vec<ListenerBuffer> {
        let state = self.state.lock();
        state
            .entries
            .iter()
            .map(|entry| ListenerBuffer {
                handler: entry.listener.state().name().to_owned(),
                len: entry.listener.state().buffered(),
            })
            .collect()
    }
}

impl<K> State<K> {
    /// Sends `events` to every listener in one hand-off each; resyncs only to the listeners
    /// due for one.
    pub(crate) fn distribute(&self, events: Vec<Event<K>>) {
        if events.is_empty() {
            return;
        }
        let has_resyncs = events.iter().any(Event::is_resync);
        let takes_all = |entry: &Entry<K>| !has_resyncs || entry.syncing;
        // The last listener that takes every event gets the batch itself, the others copies.
        let owner = self.entries.iter().rposition(takes_all);
        let mut events = Some(events);
        for (index, entry) in self.entries.iter().enumerate() {
            let Some(all) = events.as_ref() else {
                return;
            };
            let batch = if Some(index) == owner {
                events.take().unwrap_or_default()
            } else if takes_all(entry) {
                all.clone()
            } else {
                all.iter()
                    .filter(|event| !event.is_resync())
                    .cloned()
                    .collect()
            };
            entry.listener.send(batch);
        }
    }
}
