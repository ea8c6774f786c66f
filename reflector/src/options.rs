//! `ReflectorOptions`: page size, resync period and gate, streaming list, backoff, watch timeout
//! and the error and backoff hooks.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::{Backoff, BackoffStep, Error, WatchDecoding};

/// A callback told about every failure of a reflector (see [`ReflectorOptions::error_handler`]).
pub type ErrorHandler = Arc<dyn Fn(&Error) + Send + Sync>;

/// A callback told about every backoff wait (see [`ReflectorOptions::on_backoff`]).
pub type BackoffObserver = Arc<dyn Fn(&BackoffStep) + Send + Sync>;

/// Asked at every tick of the resync timer whether a resync is due (see
/// [`ReflectorOptions::should_resync`]).
pub type ResyncGate = Arc<dyn Fn() -> bool + Send + Sync>;

/// Default page size of paginated lists, as client-go's pager.
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

/// Configuration of a [`Reflector`](crate::Reflector).
///
/// ```
/// use std::time::Duration;
/// use reflector::{Backoff, ReflectorOptions};
///
/// let options = ReflectorOptions::default()
///     // Paged lists (of 100 objects) instead of the default streaming list.
///     .streaming_list(false)
///     .page_size(100)
///     .resync_period(Duration::from_secs(600))
///     .backoff(Backoff::default().max(Duration::from_secs(10)))
///     .error_handler(|error| tracing::warn!(%error, "reflector failure"));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct ReflectorOptions {
    pub(crate) page_size: Option<u32>,
    pub(crate) resync_period: Option<Duration>,
    pub(crate) should_resync: Option<ResyncGate>,
    pub(crate) streaming_list: bool,
    pub(crate) backoff: Backoff,
    pub(crate) watch_timeout: Duration,
    pub(crate) initial_events_timeout: Duration,
    pub(crate) error_handler: Option<ErrorHandler>,
    pub(crate) on_backoff: Option<BackoffObserver>,
    pub(crate) jitter_seed: Option<u64>,
    pub(crate) compact_objects: bool,
    pub(crate) watch_decoding: WatchDecoding,
}

impl Default for ReflectorOptions {
    fn default() -> Self {
        Self {
            page_size: None,
            resync_period: None,
            should_resync: None,
            streaming_list: true,
            backoff: Backoff::default(),
            watch_timeout: Duration::from_secs(300),
            initial_events_timeout: Duration::from_secs(10),
            error_handler: None,
            on_backoff: None,
            jitter_seed: None,
            compact_objects: false,
            watch_decoding: WatchDecoding::default(),
        }
    }
}

impl fmt::Debug for ReflectorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectorOptions")
            .field("page_size", &self.page_size)
            .field("resync_period", &self.resync_period)
            .field("should_resync", &self.should_resync.is_some())
            .field("streaming_list", &self.streaming_list)
            .field("backoff", &self.backoff)
            .field("watch_timeout", &self.watch_timeout)
            .field("initial_events_timeout", &self.initial_events_timeout)
            .field("error_handler", &self.error_handler.is_some())
            .field("on_backoff", &self.on_backoff.is_some())
            .field("jitter_seed", &self.jitter_seed)
            .field("compact_objects", &self.compact_objects)
            .field("watch_decoding", &self.watch_decoding)
            .finish()
    }
}

impl ReflectorOptions {
    /// Whether each decoded object is replaced by a compact copy (its `Clone`) before it goes
    /// into the store (default: no).
    ///
    /// A freshly deserialized object keeps the slack of its growing collections (a `Vec` of 5
    /// conditions holds room for 8; a map of a few labels whole tree nodes): about 15 % of a
    /// `k8s_openapi` Pod. A clone allocates each collection at its length, and the original is
    /// freed at once (kube-runtime's store gets the same effect from the clone it makes of every
    /// object). The price is one clone per object: on the benchmark's pods, 15 % fewer bytes
    /// per cached pod for about 30 % more CPU per listed pod and a slower watch
    /// (`docs/benchmarks-round-two-profiles.md`). Worth it for a large, mostly idle cache.
    pub fn compact_objects(mut self, compact: bool) -> Self {
        self.compact_objects = compact;
        self
    }

    /// Forces this page size on every paged list; `0` disables pagination. Paged lists are
    /// what the reflector falls back to where streaming lists are off or fail (see
    /// [`streaming_list`](Self::streaming_list)).
    ///
    /// Without it (the default) the reflector follows client-go: pages of 500 for the first
    /// list (RV "0") and for lists from the latest state (RV ""), but no pagination when
    /// relisting from a known resource version, which the server then answers from its watch
    /// cache — unless the server showed that it paginates RV "0" lists (no watch cache).
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size);
        self
    }

    /// Calls [`Store::resync`](indexer::Store::resync) this often while watching (default:
    /// never). A resync replays the local cache to handlers; it never talks to the server.
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = Some(period).filter(|p| !p.is_zero());
        self
    }

    /// Asked at every tick of the [resync timer](Self::resync_period) whether to resync now
    /// (client-go's `ShouldResync`); without it every tick resyncs. A shared informer passes
    /// its handlers' schedule here: the timer ticks at the shortest handler period, and the
    /// gate says whether any handler is due. Keep it cheap: it runs on the reflector's task.
    pub fn should_resync(mut self, gate: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.should_resync = Some(Arc::new(gate));
        self
    }

    /// Whether to list with a streaming watch (`sendInitialEvents`, KEP-3157) instead of
    /// paginated lists (default: yes, as client-go since 1.35 with its `WatchListClient`
    /// feature). A streaming list costs the server far less memory than paged lists of the
    /// same objects, and its snapshot is consistent.
    ///
    /// Where a streaming list fails, the reflector lists in pages in the same attempt, with no
    /// backoff step in between; a server that refuses `sendInitialEvents` (400 or 422, as
    /// Kubernetes before 1.27 or with the WatchList feature off does) or answers with a plain
    /// watch is remembered, and later relists page at once. `false` pages every list, as
    /// client-go did before 1.35 (see [`page_size`](Self::page_size)); an outside test of the
    /// list path, or a server known to have no streaming lists, wants that.
    pub fn streaming_list(mut self, enabled: bool) -> Self {
        self.streaming_list = enabled;
        self
    }

    /// The delays between failed attempts (default: [`Backoff::default`]).
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The minimum watch duration asked of the server: each watch requests a random
    /// `timeoutSeconds` in `[min, 2·min)`, so that reflectors do not reconnect in lockstep
    /// (default 5 minutes, i.e. 5–10 minutes; at least one second).
    pub fn watch_timeout(mut self, min: Duration) -> Self {
        self.watch_timeout = min.max(Duration::from_secs(1));
        self
    }

    /// How long a streaming list may stay silent before its initial-events-end bookmark
    /// before the reflector decides the server ignores `sendInitialEvents` and falls back to a
    /// paginated list (default 10 s).
    pub fn initial_events_timeout(mut self, timeout: Duration) -> Self {
        self.initial_events_timeout = timeout;
        self
    }

    /// Called with every failure: failed lists and watches, `ERROR` events (with the server's
    /// code and reason, see [`Error::code`] and [`Error::status`]), skipped objects, store
    /// errors, and streaming lists that fell back to paginated lists. The reflector logs and
    /// retries regardless; the handler cannot stop it. Keep it cheap: it runs on the
    /// reflector's task.
    pub fn error_handler(mut self, handler: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.error_handler = Some(Arc::new(handler));
        self
    }

    /// Called just before every backoff wait, with the step of the ladder and the actual
    /// (jittered) wait: the hook that makes the retry schedule observable in tests and metrics.
    pub fn on_backoff(mut self, observer: impl Fn(&BackoffStep) + Send + Sync + 'static) -> Self {
        self.on_backoff = Some(Arc::new(observer));
        self
    }

    /// Where the lines of watch responses (and streaming lists) are decoded (default
    /// [`WatchDecoding::Pipelined`]: a reader task and decoding tasks, which spread a busy
    /// watch over the threads of a multi-threaded runtime). [`WatchDecoding::Inline`] decodes
    /// on the reflector's own task as the stream is read: choose it on a current-thread
    /// runtime, or for many reflectors of quiet collections. The choice reaches the
    /// lister-watcher through [`ListerWatcher::watch_with_decoding`](crate::ListerWatcher::watch_with_decoding);
    /// it changes where the work runs, never which events come out or in which order.
    pub fn watch_decoding(mut self, decoding: WatchDecoding) -> Self {
        self.watch_decoding = decoding;
        self
    }

    /// Seeds the random source of backoff jitter and watch timeouts, for reproducible runs
    /// (default: a random seed).
    pub fn jitter_seed(mut self, seed: u64) -> Self {
        self.jitter_seed = Some(seed);
        self
    }
}
