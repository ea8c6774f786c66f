//! A [`TestCluster`]'s fault injection: the simulator's own, or the [`FaultProxy`] a cluster
//! started with [`TestCluster::start_with_faults`] puts in front of a real server.

use std::time::Duration;

use apiserver_sim::WatchListMode;

use crate::fault::{Fault, FaultError, InjectFaults};
use crate::proxy::{FaultProxy, WatchHold};

use super::{Backend, TestCluster};

/// Where a [`TestCluster`]'s faults are injected.
enum Injector<'a> {
    Simulator(&'a apiserver_sim::ApiServer),
    Proxy(&'a FaultProxy),
    /// A real server without a proxy: the test started with [`TestCluster::start`].
    None,
}

impl TestCluster {
    fn injector(&self) -> Injector<'_> {
        match &self.backend {
            Backend::Simulator(server) => Injector::Simulator(server),
            Backend::Cluster {
                proxy: Some(proxy), ..
            } => Injector::Proxy(proxy),
            Backend::Cluster { proxy: None, .. } => Injector::None,
        }
    }

    /// Holds new watches back until the hold is dropped ([`FaultProxy::hold_watches`]): with
    /// [`InjectFaults::drop_watches`], the test changes the server while its clients are
    /// disconnected. On the simulator the hold is empty: the cluster's calls there complete
    /// without yielding, so nothing else on the test's runtime runs until the test awaits
    /// something else.
    pub fn hold_watches(&self) -> WatchHold {
        match self.injector() {
            Injector::Proxy(proxy) => proxy.hold_watches(),
            Injector::Simulator(_) => WatchHold::empty(),
            Injector::None => {
                no_proxy("holding the watches");
                WatchHold::empty()
            }
        }
    }
}

/// Logged when a server-wide fault is asked of a real server without a proxy.
fn no_proxy(what: &str) {
    tracing::error!(
        "{what} asked of a real server without a fault proxy: start the test with \
         TestCluster::start_with_faults"
    );
}

/// On the simulator, its own injection; on a real server, the fault proxy's. On a real server
/// started without one ([`TestCluster::start`]), injecting fails with
/// [`FaultError::Unsupported`], the server-wide faults are logged as errors and do nothing,
/// and the request record is empty.
impl InjectFaults for TestCluster {
    fn inject(&self, fault: impl Into<Fault>) -> Result<(), FaultError> {
        match self.injector() {
            Injector::Simulator(server) => server.inject(fault),
            Injector::Proxy(proxy) => proxy.inject(fault),
            Injector::None => Err(FaultError::Unsupported {
                effect: Into::<Fault>::into(fault).effect.name(),
                server: "a real server without a proxy (TestCluster::start_with_faults)",
            }),
        }
    }

    fn clear_faults(&self) {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::clear_faults(server),
            Injector::Proxy(proxy) => proxy.clear_faults(),
            Injector::None => {}
        }
    }

    fn drop_watches(&self) {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::drop_watches(server),
            Injector::Proxy(proxy) => proxy.drop_watches(),
            Injector::None => no_proxy("dropping the watches"),
        }
    }

    fn restart(&self, downtime: Duration) {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::restart(server, downtime),
            Injector::Proxy(proxy) => proxy.restart(downtime),
            Injector::None => no_proxy("a restart"),
        }
    }

    async fn compact(&self) -> Result<u64, FaultError> {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::compact(server).await,
            Injector::Proxy(proxy) => proxy.compact().await,
            Injector::None => Err(FaultError::Unsupported {
                effect: "compaction",
                server: "a real server without a proxy (TestCluster::start_with_faults)",
            }),
        }
    }

    fn request_count(&self, verb: &str, resource: &str) -> u64 {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::request_count(server, verb, resource),
            Injector::Proxy(proxy) => proxy.request_count(verb, resource),
            Injector::None => 0,
        }
    }

    fn reset_request_counts(&self) {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::reset_request_counts(server),
            Injector::Proxy(proxy) => proxy.reset_request_counts(),
            Injector::None => {}
        }
    }

    fn open_watches(&self) -> usize {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::open_watches(server),
            Injector::Proxy(proxy) => proxy.open_watches(),
            Injector::None => 0,
        }
    }

    fn set_watch_list_mode(&self, mode: WatchListMode) {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::set_watch_list_mode(server, mode),
            Injector::Proxy(proxy) => proxy.set_watch_list_mode(mode),
            Injector::None => no_proxy("the watch-list switch"),
        }
    }

    async fn send_bookmarks(&self) -> Result<u64, FaultError> {
        match self.injector() {
            Injector::Simulator(server) => InjectFaults::send_bookmarks(server).await,
            Injector::Proxy(proxy) => proxy.send_bookmarks().await,
            Injector::None => Err(FaultError::Unsupported {
                effect: "bookmark on demand",
                server: "a real server without a proxy (TestCluster::start_with_faults)",
            }),
        }
    }
}
