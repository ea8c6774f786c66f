//! State shared by the HTTP handlers, watch streams, controllers and the public handle.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};

use crate::admission::endpoints::ServiceEndpoints;
use crate::admission::hooks::HookCache;
use crate::faults::chaos::config::ChaosConfig;
use crate::faults::chaos::state::Chaos;
use crate::faults::fail_rules::Faults;
use crate::faults::server_faults::ServerFaults;
use crate::store::{State, StoreConfig};

/// Largest accepted request body: 3 MiB, like kube-apiserver. Larger bodies get 413.
pub const BODY_LIMIT: usize = 3 * 1024 * 1024;

/// Server tunables.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Store tunables.
    pub store: StoreConfig,
    /// Interval between periodic watch bookmarks (sent only when the RV moved).
    pub bookmark_interval: Duration,
    /// Watch duration when the client sends no `timeoutSeconds`.
    pub default_watch_timeout: Duration,
    /// Largest accepted request body in bytes (larger → 413).
    pub body_limit: usize,
    /// Delay of the workload simulator; `None` (the default) leaves it off.
    pub workload_delay: Option<Duration>,
    /// Chaos mode; `None` (the default) leaves it off.
    pub chaos: Option<ChaosConfig>,
    /// Where webhook services are reachable (there is no cluster network).
    pub service_endpoints: ServiceEndpoints,
    /// Whether requests are authenticated and authorized with RBAC (default: off).
    pub rbac: bool,
    /// Whether `OwnerReferencesPermissionEnforcement` admits writes (default: off; only
    /// with RBAC on).
    pub owner_references_permission_enforcement: bool,
    /// The CA bundle of each namespace's `kube-root-ca.crt`; `None` (the default): namespaces
    /// get neither it nor a `default` ServiceAccount.
    pub root_ca: Option<String>,
    /// Whether lists from resourceVersion "0" are answered as kube-apiserver's watch cache
    /// answers them, whole, ignoring `limit` (default: on, as kube-apiserver's default).
    pub watch_cache: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            store: StoreConfig::default(),
            bookmark_interval: Duration::from_secs(60),
            default_watch_timeout: Duration::from_secs(1800),
            body_limit: BODY_LIMIT,
            workload_delay: None,
            chaos: None,
            service_endpoints: ServiceEndpoints::default(),
            rbac: false,
            owner_references_permission_enforcement: false,
            root_ca: None,
            watch_cache: true,
        }
    }
}

/// Everything the server's tasks share.
pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub config: ServerConfig,
    /// Bumped to end every open watch (see [`ServerFaults::drop_watches`]).
    pub end_watches: watch::Sender<u64>,
    /// Set to true on shutdown.
    pub shutdown: watch::Sender<bool>,
    /// Bumped to cut every open connection (the "restart" fault, see [`ServerFaults::restart`]).
    pub cut_connections: watch::Sender<u64>,
    /// Until then, new connections are closed as soon as accepted (a restart's downtime).
    pub down_until: Mutex<Option<tokio::time::Instant>>,
    /// Chaos mode, when enabled.
    pub chaos: Option<Chaos>,
    /// Bumped to make every bookmark-enabled watch send a bookmark now (see
    /// [`ServerFaults::send_bookmarks`]).
    pub bookmark_now: watch::Sender<u64>,
    /// How `sendInitialEvents` is treated ([`WatchListMode`] as `u8`).
    watch_list: std::sync::atomic::AtomicU8,
    /// Requests received by verb and resource.
    pub requests: crate::counts::RequestCounts,
    /// Watch streams currently open.
    pub open_watches: std::sync::atomic::AtomicUsize,
    /// False while the "unready" fault is active (`/readyz` 500, API requests 429).
    pub ready: std::sync::atomic::AtomicBool,
    pub faults: Mutex<Faults>,
    pub controllers: Arc<Notify>,
    /// The bound address, once listening.
    pub addr: std::sync::OnceLock<std::net::SocketAddr>,
    /// The admission webhooks as last configured.
    pub admission: HookCache,
    /// Authentication and authorization (RBAC), on or off.
    pub auth: crate::auth::state::Auth,
}

/// How the server treats `sendInitialEvents` (streaming lists, the WatchList feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchListMode {
    /// Streaming lists are served: initial ADDED events, then a BOOKMARK annotated
    /// [`crate::INITIAL_EVENTS_END`], then live events (the default).
    #[default]
    Supported = 0,
    /// `sendInitialEvents` is refused with 422 Invalid, as by a server with the WatchList
    /// feature gate disabled.
    Rejected = 1,
    /// `sendInitialEvents` and `resourceVersionMatch` are ignored, as by an old server that
    /// predates the WatchList feature: the watch is served as if they were absent (without
    /// a resourceVersion: synthetic ADDED events for the current state, then live events,
    /// and never an initial-events-end bookmark; with one: the events after it).
    Ignored = 2,
}

/// Resolves once the server shuts down, also when it already had before `shutdown` subscribed:
/// a plain `changed()` misses a shutdown sent before the receiver existed and waits forever (a
/// task first polled after `ApiServer::shutdown` began would never end).
pub(crate) async fn shutting_down(shutdown: &mut watch::Receiver<bool>) {
    // An error means the sender is gone, which only happens once the server is dropped.
    let _ = shutdown.wait_for(|down| *down).await;
}

impl Shared {
    /// The current [`WatchListMode`].
    pub fn watch_list_mode(&self) -> WatchListMode {
        match self.watch_list.load(std::sync::atomic::Ordering::SeqCst) {
            1 => WatchListMode::Rejected,
            2 => WatchListMode::Ignored,
            _ => WatchListMode::Supported,
        }
    }

    /// Sets the [`WatchListMode`].
    pub fn set_watch_list_mode(&self, mode: WatchListMode) {
        self.watch_list
            .store(mode as u8, std::sync::atomic::Ordering::SeqCst);
    }

    /// The server's state and channels, as configured (nothing is running yet).
    pub fn new(config: ServerConfig) -> Arc<Self> {
        let controllers = Arc::new(Notify::new());
        let state = State::new(
            config.store.clone(),
            crate::kinds::builtins::builtins(),
            controllers.clone(),
        );
        let chaos = config.chaos.map(Chaos::new);
        let auth = crate::auth::state::Auth::new(
            config.rbac,
            config.owner_references_permission_enforcement,
        );
        Arc::new(Self {
            state: Mutex::new(state),
            config,
            end_watches: watch::channel(0).0,
            shutdown: watch::channel(false).0,
            bookmark_now: watch::channel(0).0,
            cut_connections: watch::channel(0).0,
            down_until: Mutex::new(None),
            chaos,
            ready: std::sync::atomic::AtomicBool::new(true),
            open_watches: std::sync::atomic::AtomicUsize::new(0),
            watch_list: std::sync::atomic::AtomicU8::new(WatchListMode::Supported as u8),
            requests: Default::default(),
            faults: Mutex::new(Faults::default()),
            controllers,
            addr: std::sync::OnceLock::new(),
            admission: HookCache::default(),
            auth,
        })
    }
}

/// The server-wide faults act on the channels every watch and connection follows, and on
/// the store's history.
impl ServerFaults for Shared {
    fn drop_watches(&self) {
        self.end_watches.send_modify(|v| *v += 1);
    }

    fn compact(&self) -> u64 {
        let mut st = self.state.lock();
        st.compact();
        st.rv
    }

    fn restart(&self, downtime: Duration) {
        *self.down_until.lock() = Some(tokio::time::Instant::now() + downtime);
        self.cut_connections.send_modify(|v| *v += 1);
    }

    fn send_bookmarks(&self) {
        self.bookmark_now.send_modify(|v| *v += 1);
    }
}
