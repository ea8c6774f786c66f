//! The chaos timeline: applies each event of the [`ChaosSchedule`] at its time to the
//! running server, through its [`ServerFaults`].
//!
//! [`ChaosSchedule`]: super::schedule::ChaosSchedule

use std::future::Future;

use super::schedule::ChaosEvent;
use super::state::Chaos;
use super::stats::FaultKind;
use crate::faults::server_faults::ServerFaults;

/// The timeline task: applies each scheduled event of `chaos` to `server` at its time, until
/// chaos stops or `shutdown` resolves.
pub(crate) async fn run(
    chaos: &Chaos,
    server: &impl ServerFaults,
    shutdown: impl Future<Output = ()>,
) {
    let start = tokio::time::Instant::now();
    tokio::pin!(shutdown);
    for s in chaos.config().schedule() {
        tokio::select! {
            () = &mut shutdown => return,
            _ = tokio::time::sleep_until(start + s.at) => {}
        }
        if !chaos.active() {
            return;
        }
        tracing::debug!(event = ?s.event, at = ?s.at, "chaos");
        match s.event {
            ChaosEvent::DropWatches => {
                chaos.record(FaultKind::WatchDrop);
                server.drop_watches();
            }
            ChaosEvent::Compact => {
                chaos.record(FaultKind::Compaction);
                server.compact();
            }
            ChaosEvent::Restart { downtime } => {
                chaos.record(FaultKind::Restart);
                server.restart(downtime);
            }
            ChaosEvent::SendBookmarks => {
                server.send_bookmarks();
            }
        }
    }
}
