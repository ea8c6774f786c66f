//! [`SlowPop`]: finds consumers whose processing holds up a busy fifo, by timing a sample of
//! pops.

use std::fmt::Display;
use std::time::{Duration, Instant};

/// A pop that runs longer than this with more than [`SLOW_POP_BACKLOG`] entries waiting is
/// logged.
const SLOW_POP: Duration = Duration::from_millis(100);
const SLOW_POP_BACKLOG: usize = 10;
/// One pop in this many is timed: slow handlers are slow on every pop, so sampling finds them
/// without reading the clock twice per pop.
const SLOW_POP_SAMPLING: u64 = 16;

/// The timing of one pop, when it is sampled.
pub(crate) struct SlowPop {
    started: Option<Instant>,
    backlog: usize,
}

impl SlowPop {
    /// Times pop number `pops` if it is sampled and more than a few entries wait behind it.
    pub(crate) fn start(pops: u64, backlog: usize) -> Self {
        let timed = backlog > SLOW_POP_BACKLOG && pops.is_multiple_of(SLOW_POP_SAMPLING);
        Self {
            started: timed.then(Instant::now),
            backlog,
        }
    }

    /// Whether this pop is timed.
    pub(crate) fn is_timed(&self) -> bool {
        self.started.is_some()
    }

    /// Logs the pop if it was timed and slow; `what` names what it processed.
    pub(crate) fn finish(self, what: Option<impl Display>) {
        let (Some(started), Some(what)) = (self.started, what) else {
            return;
        };
        let took = started.elapsed();
        if took > SLOW_POP {
            tracing::warn!(%what, ?took, backlog = self.backlog, "fifo pop was slow: slow event handlers hold up the queue");
        }
    }
}
