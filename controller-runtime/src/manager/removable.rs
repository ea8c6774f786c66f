//! [`Removable`]: a runnable that can be stopped alone — a controller removed from a running
//! manager, with its event recorder — and reports whether it is running.

use std::error::Error as StdError;

use async_trait::async_trait;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::ops::runnable::Runnable;

/// Where a removable runnable is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not run yet (the manager has not started it, or waits for leadership).
    Pending,
    /// Running.
    Running,
    /// Returned.
    Finished,
}

/// Wraps a runnable so that cancelling `removed` stops it as a manager shutdown would.
pub(crate) struct Removable {
    inner: Box<dyn Runnable>,
    removed: CancellationToken,
    phase: watch::Sender<Phase>,
}

impl Removable {
    /// Wraps `inner`; `removed` stops it, `phase` follows it.
    pub(crate) fn new(
        inner: Box<dyn Runnable>,
        removed: CancellationToken,
        phase: watch::Sender<Phase>,
    ) -> Self {
        Self {
            inner,
            removed,
            phase,
        }
    }
}

#[async_trait]
impl Runnable for Removable {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn need_leader_election(&self) -> bool {
        self.inner.need_leader_election()
    }

    fn permissions(&self) -> Vec<crate::rbac::Rule> {
        self.inner.permissions()
    }

    fn warms_up(&self) -> bool {
        self.inner.warms_up()
    }

    fn warm_up(&self, shutdown: &CancellationToken) {
        if !self.removed.is_cancelled() {
            self.inner.warm_up(shutdown);
        }
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        let Self {
            inner,
            removed,
            phase,
        } = *self;
        if removed.is_cancelled() {
            phase.send_replace(Phase::Finished);
            return Ok(());
        }
        phase.send_replace(Phase::Running);
        // Stopped by whichever comes first: the manager's shutdown or the removal.
        let stop = removed.child_token();
        let relay = {
            let stop = stop.clone();
            tokio::spawn(async move {
                shutdown.cancelled().await;
                stop.cancel();
            })
        };
        let result = inner.run(stop).await;
        relay.abort();
        phase.send_replace(Phase::Finished);
        result
    }
}
