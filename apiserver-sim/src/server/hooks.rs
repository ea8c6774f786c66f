//! Fault and test hooks of the public handle: failure rules, server-wide faults (watch
//! drops, compaction, restarts, bookmarks), readiness, WatchList support, chaos mode.

use std::time::Duration;

use super::handle::ApiServer;
use crate::error::{Error, Result};
use crate::faults::chaos::config::ChaosConfig;
use crate::faults::chaos::stats::ChaosStats;
use crate::faults::fail_rules::FailRule;
use crate::faults::server_faults::ServerFaults;
use crate::shared::WatchListMode;

/// Faults and test hooks.
impl ApiServer {
    /// Ends every open watch now (cleanly, without an ERROR event).
    pub fn drop_watches(&self) {
        self.shared.drop_watches();
    }

    /// Discards all watch history up to the current RV (older watch, Exact-list and
    /// continue RVs then get 410 Expired). Returns the compaction RV.
    pub fn compact(&self) -> u64 {
        self.shared.compact()
    }

    /// Installs a failure rule: [`FailRule::new`] fails the next `count` matching requests,
    /// [`FailRule::random`] fails matching requests at random until [`ApiServer::clear_faults`].
    /// An invalid rule (probability outside `[0, 1]`) is logged as an error and not
    /// installed; use [`ApiServer::try_fail_next`] to get the error instead.
    pub fn fail_next(&self, rule: FailRule) {
        if let Err(e) = self.try_fail_next(rule) {
            tracing::error!(error = %e, "fault rule not installed");
        }
    }

    /// Like [`ApiServer::fail_next`], returning [`Error::InvalidFault`] for an invalid rule.
    pub fn try_fail_next(&self, rule: FailRule) -> Result<()> {
        self.shared
            .faults
            .lock()
            .add(rule)
            .map_err(Error::InvalidFault)
    }

    /// Removes every pending failure rule.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().clear();
    }

    /// A restart that keeps the data: every open connection is cut at once (in-flight
    /// requests and watch streams end abruptly, without a final chunk), and for
    /// `downtime` new connections are closed as soon as they are accepted.
    pub fn restart(&self, downtime: Duration) {
        self.shared.restart(downtime);
    }

    /// Faults chaos mode has injected so far, per kind (all zero without chaos mode).
    pub fn chaos_stats(&self) -> ChaosStats {
        self.shared
            .chaos
            .as_ref()
            .map(|c| c.stats())
            .unwrap_or_default()
    }

    /// The chaos settings the server was started with, if any.
    pub fn chaos_config(&self) -> Option<ChaosConfig> {
        self.shared.chaos.as_ref().map(|c| c.config())
    }

    /// Ends chaos mode for good: no more faults are injected (watches already marked for
    /// slow bookmarks send the rest on time), so clients can converge. Counters are kept.
    pub fn stop_chaos(&self) {
        if let Some(c) = &self.shared.chaos {
            c.stop();
        }
    }

    /// Makes every open watch that allows bookmarks send a BOOKMARK with the current RV now.
    pub fn send_bookmarks(&self) {
        self.shared.send_bookmarks();
    }

    /// The "unready" fault: while false, `/readyz` answers 500 and every API request 429
    /// ("storage is (re)initializing", `Retry-After: 1`).
    pub fn set_ready(&self, ready: bool) {
        self.shared
            .ready
            .store(ready, std::sync::atomic::Ordering::SeqCst);
    }

    /// The "WatchList off" fault (`false`): `sendInitialEvents` is rejected with 422, as on
    /// a server without the WatchList feature; `true` (the default) restores it. Shorthand
    /// for [`ApiServer::set_watch_list_mode`] with [`WatchListMode::Rejected`] or
    /// [`WatchListMode::Supported`].
    pub fn set_watch_list(&self, enabled: bool) {
        self.set_watch_list_mode(if enabled {
            WatchListMode::Supported
        } else {
            WatchListMode::Rejected
        });
    }

    /// How `sendInitialEvents` (streaming lists) is treated: served (the default), rejected
    /// with 422, or ignored like an old server (the watch is served as if the parameter were
    /// absent, so no initial-events-end bookmark ever comes). Applies to watches started
    /// afterwards.
    pub fn set_watch_list_mode(&self, mode: WatchListMode) {
        self.shared.set_watch_list_mode(mode);
    }

    /// The current [`WatchListMode`].
    pub fn watch_list_mode(&self) -> WatchListMode {
        self.shared.watch_list_mode()
    }
}
