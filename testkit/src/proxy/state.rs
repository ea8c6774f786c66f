//! [`State`]: what the proxy's handle, its accept loop and its request handlers share.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use apiserver_sim::WatchListMode;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;

use super::bookmarks::Kinds;
use super::counts::Counts;
use super::rules::RuleBook;
use super::upstream::Upstream;

/// The proxy's shared state.
pub(crate) struct State {
    /// The server behind the proxy.
    pub upstream: Upstream,
    /// Pending faults.
    pub rules: Mutex<RuleBook>,
    /// Requests and open watches.
    pub counts: Arc<Counts>,
    /// The resourceVersion compacted to (0: none).
    compacted: AtomicU64,
    /// Bumped to end every open watch.
    pub watches_dropped: watch::Sender<u64>,
    /// Bumped to cut every open connection.
    pub connections_cut: watch::Sender<u64>,
    /// Until when new connections are closed at once.
    down_until: Mutex<Option<Instant>>,
    /// Set when the proxy stops.
    pub shutdown: watch::Sender<bool>,
    /// How watches that ask for a streaming list (`sendInitialEvents`) are treated.
    pub watch_list: Mutex<WatchListMode>,
    /// The resourceVersion of the bookmarks a test asked for last (0: none yet).
    pub bookmark_now: watch::Sender<u64>,
    /// The kinds that watches' bookmarks name.
    pub kinds: Kinds,
    /// How many holds keep new watches waiting in the proxy.
    pub watches_held: watch::Sender<usize>,
}

impl State {
    /// The state of a proxy in front of `upstream`, without faults.
    pub fn new(upstream: Upstream) -> Self {
        Self {
            upstream,
            rules: Mutex::default(),
            counts: Arc::default(),
            compacted: AtomicU64::new(0),
            watches_dropped: watch::Sender::new(0),
            connections_cut: watch::Sender::new(0),
            down_until: Mutex::new(None),
            shutdown: watch::Sender::new(false),
            watch_list: Mutex::default(),
            bookmark_now: watch::Sender::new(0),
            kinds: Kinds::default(),
            watches_held: watch::Sender::new(0),
        }
    }

    /// The resourceVersion compaction was played at, if any.
    pub fn compacted(&self) -> Option<u64> {
        Some(self.compacted.load(Ordering::SeqCst)).filter(|rv| *rv > 0)
    }

    /// Plays compaction at `rv` (never back to an earlier one).
    pub fn compact_to(&self, rv: u64) {
        self.compacted.fetch_max(rv, Ordering::SeqCst);
    }

    /// Ends every open watch.
    pub fn drop_watches(&self) {
        self.watches_dropped.send_modify(|n| *n += 1);
    }

    /// Cuts every open connection and closes new ones for `downtime`.
    pub fn restart(&self, downtime: Duration) {
        *self.down_until.lock() = Some(Instant::now() + downtime);
        self.connections_cut.send_modify(|n| *n += 1);
    }

    /// Whether new connections are closed at once now.
    pub fn is_down(&self) -> bool {
        self.down_until
            .lock()
            .is_some_and(|until| Instant::now() < until)
    }
}
