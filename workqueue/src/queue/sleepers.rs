//! The workers sleeping in `get`, each woken at most once per sleep.
//!
//! A worker that finds nothing to take registers a [`Sleeper`] of its own and waits on it. A
//! wake-up claims the oldest registered sleeper, removing it from the list, and then notifies
//! it, so every wake-up reaches a different worker. Adds and `get`s that pass the baton while an
//! earlier wake-up is still on its way therefore neither wake the same worker again nor leave a
//! permit behind that would make some later sleep return at once to find nothing (which a
//! shared `Notify` with a count that only the woken worker lowers did: the count stays up until
//! that worker runs again, and every add meanwhile notified once more).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The registered sleepers, oldest first.
pub(crate) struct Sleepers {
    list: Mutex<VecDeque<Arc<Sleeper>>>,
    /// How many are registered, published under the list's lock and read without it: wakers look
    /// here first and take the lock only when someone sleeps.
    count: AtomicUsize,
}

/// One worker's sleep: claimed (and removed from the list) by exactly one wake-up.
pub(crate) struct Sleeper {
    /// Set, under the list's lock, by the wake-up that claims this sleeper.
    claimed: AtomicBool,
    /// Notified once by the wake-up that claimed this sleeper (a permit if it is not waiting yet).
    woken: Notify,
}

impl Sleepers {
    /// No sleepers.
    pub(crate) fn new() -> Self {
        Self {
            list: Mutex::new(VecDeque::new()),
            count: AtomicUsize::new(0),
        }
    }

    /// How many workers sleep, as last published.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Claims the oldest sleeper and wakes it; does nothing when no one sleeps.
    pub(crate) fn wake_one(&self) {
        if self.count() == 0 {
            return;
        }
        let claimed = {
            let mut list = self.list.lock();
            let claimed = list.pop_front();
            if let Some(sleeper) = &claimed {
                sleeper.claimed.store(true, Ordering::SeqCst);
            }
            self.count.store(list.len(), Ordering::SeqCst);
            claimed
        };
        if let Some(sleeper) = claimed {
            sleeper.woken.notify_one();
        }
    }

    /// Claims and wakes every sleeper (the queue shuts down).
    pub(crate) fn wake_all(&self) {
        let claimed: Vec<Arc<Sleeper>> = {
            let mut list = self.list.lock();
            let claimed: Vec<_> = list.drain(..).collect();
            for sleeper in &claimed {
                sleeper.claimed.store(true, Ordering::SeqCst);
            }
            self.count.store(0, Ordering::SeqCst);
            claimed
        };
        for sleeper in claimed {
            sleeper.woken.notify_one();
        }
    }

    /// Adds `sleeper` to the list, unclaimed.
    fn register(&self, sleeper: &Arc<Sleeper>) {
        let mut list = self.list.lock();
        sleeper.claimed.store(false, Ordering::SeqCst);
        list.push_back(Arc::clone(sleeper));
        self.count.store(list.len(), Ordering::SeqCst);
    }

    /// Takes `sleeper` off the list unless a wake-up claimed it; returns whether one had.
    fn deregister(&self, sleeper: &Arc<Sleeper>) -> bool {
        let mut list = self.list.lock();
        if sleeper.claimed.load(Ordering::SeqCst) {
            return true;
        }
        list.retain(|registered| !Arc::ptr_eq(registered, sleeper));
        self.count.store(list.len(), Ordering::SeqCst);
        false
    }
}

impl Sleeper {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            claimed: AtomicBool::new(false),
            woken: Notify::new(),
        })
    }
}

/// A worker's registration as a sleeper, across the sleeps of one `get`. Dropped while
/// registered (the `get` was cancelled), it deregisters, and passes on a wake-up that had
/// already claimed it, so that the work it announced still reaches a worker.
pub(crate) struct Registration<'a> {
    sleepers: &'a Sleepers,
    sleeper: Arc<Sleeper>,
    registered: bool,
}

impl<'a> Registration<'a> {
    /// Not registered yet.
    pub(crate) fn new(sleepers: &'a Sleepers) -> Self {
        Self {
            sleepers,
            sleeper: Sleeper::new(),
            registered: false,
        }
    }

    /// Registers the worker as sleeping. Call under the queue's lock, after finding nothing to
    /// take and before the last look at the inbox.
    pub(crate) fn register(&mut self) {
        self.sleepers.register(&self.sleeper);
        self.registered = true;
    }

    /// Withdraws the registration: the worker found work after all and goes on looking (under
    /// the queue's lock). A wake-up that claimed it meanwhile is absorbed, since the worker is
    /// awake and looking; its notification stays with the old sleeper, so a fresh one is used
    /// for the next sleep.
    pub(crate) fn withdraw(&mut self) {
        self.registered = false;
        if self.sleepers.deregister(&self.sleeper) {
            self.sleeper = Sleeper::new();
        }
    }

    /// Waits until a wake-up claims this worker (at once if one already did). The claim took
    /// it off the list, so it is no longer registered afterwards.
    pub(crate) async fn sleep(&mut self) {
        self.sleeper.woken.notified().await;
        self.registered = false;
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if self.registered && self.sleepers.deregister(&self.sleeper) {
            self.sleepers.wake_one();
        }
    }
}
