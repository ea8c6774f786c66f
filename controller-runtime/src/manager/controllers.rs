//! Adding runnables and controllers — before `start`, or to a running manager — and removing a
//! controller (its watches stop when no one else uses them).

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::controller::Teardown;
use crate::manager::error::Error;
use crate::manager::removable::{Phase, Removable};
use crate::manager::running::Manager;
use crate::manager::state::ControllerSlot;
use crate::ops::runnable::Runnable;

/// Why the manager refused a runnable.
pub(super) enum Refused {
    /// `start` has returned.
    Stopped,
    /// A permission it declares.
    Rbac(crate::rbac::Error),
}

impl From<Refused> for Error {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Stopped => Self::Stopped,
            Refused::Rbac(error) => Self::Rbac(error),
        }
    }
}

impl Manager {
    /// Adds a runnable. Before [`start`](Self::start) it runs once the caches synced; added to
    /// a running manager it starts at once (if it needs leadership: once this manager leads).
    /// [`Error::Stopped`] once `start` has returned.
    pub fn add(&self, runnable: impl Runnable) -> Result<(), Error> {
        Ok(self.add_boxed(Box::new(runnable))?)
    }

    fn add_boxed(&self, runnable: Box<dyn Runnable>) -> Result<(), Refused> {
        self.require_all(runnable.permissions())
            .map_err(Refused::Rbac)?;
        let mut state = self.state.lock();
        if state.stopped {
            return Err(Refused::Stopped);
        }
        match &state.late {
            Some(late) => late.send(runnable).map_err(|_| Refused::Stopped),
            None => {
                state.runnables.push(runnable);
                Ok(())
            }
        }
    }

    /// Adds a built controller's runnables (run and event recorder), removable together.
    pub(super) fn add_controller(
        &self,
        name: &str,
        runnables: Vec<Box<dyn Runnable>>,
        teardown: Teardown,
    ) -> Result<(), Refused> {
        let removed = CancellationToken::new();
        let mut phases = Vec::with_capacity(runnables.len());
        for runnable in runnables {
            let (phase, watched) = watch::channel(Phase::Pending);
            phases.push(watched);
            self.add_boxed(Box::new(Removable::new(runnable, removed.clone(), phase)))?;
        }
        for kind in &teardown.kinds {
            self.registry.acquire(kind);
        }
        let slot = ControllerSlot {
            removed,
            phases,
            teardown,
        };
        self.state.lock().controllers.insert(name.to_owned(), slot);
        Ok(())
    }

    /// Stops the controller `name` — its workers finish their in-flight reconciles, bounded by
    /// the graceful shutdown timeout — removes its event handlers, and stops the informers of
    /// the kinds it watched that nothing else uses (another controller, a field index,
    /// a request for its informers, a lazy read). The name can be used again afterwards.
    /// [`Error::UnknownController`] if no controller has that name.
    pub async fn remove_controller(&self, name: &str) -> Result<(), Error> {
        let slot = {
            let mut state = self.state.lock();
            let slot = state
                .controllers
                .remove(name)
                .ok_or_else(|| Error::UnknownController(name.to_owned()))?;
            state.names.remove(name);
            slot
        };
        slot.removed.cancel();
        for mut phase in slot.phases {
            if *phase.borrow() != Phase::Running {
                continue;
            }
            let finished = phase.wait_for(|phase| *phase == Phase::Finished);
            if tokio::time::timeout(self.graceful_shutdown_timeout, finished)
                .await
                .is_err()
            {
                tracing::warn!(controller = name, timeout = ?self.graceful_shutdown_timeout, "removed controller did not stop in time; removing its watches anyway");
            }
        }
        for remove in slot.teardown.handlers {
            remove();
        }
        for kind in slot.teardown.kinds {
            self.registry.release(&kind);
        }
        tracing::info!(controller = name, "controller removed");
        Ok(())
    }

    /// The names of the controllers registered with this manager, sorted.
    pub fn controller_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.state.lock().controllers.keys().cloned().collect();
        names.sort();
        names
    }
}
