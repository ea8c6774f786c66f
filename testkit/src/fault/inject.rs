//! [`InjectFaults`]: what a fault test asks of its server, implemented by the simulator's
//! handle and by the [`FaultProxy`](crate::proxy::FaultProxy), so the same test source runs
//! against the simulator alone or against any server behind the proxy.

use std::future::Future;
use std::time::Duration;

use apiserver_sim::{ApiServer, WatchListMode};

use super::description::Fault;

/// What injecting a fault fails with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FaultError {
    /// The fault is not valid (a probability outside `[0, 1]`).
    #[error("invalid fault: {0}")]
    Invalid(String),
    /// The server cannot produce this effect (the simulator alone has no wire faults: put a
    /// `FaultProxy` in front of it).
    #[error("{server} cannot inject a {effect}: put a FaultProxy in front of it")]
    Unsupported {
        /// The effect's name.
        effect: &'static str,
        /// Which server.
        server: &'static str,
    },
    /// The proxy could not start, or could not ask its upstream server something.
    #[error("fault proxy: {0}")]
    Proxy(String),
}

/// Fault injection and the request record of a server: the simulator itself, or a
/// [`FaultProxy`](crate::proxy::FaultProxy) in front of any server.
pub trait InjectFaults {
    /// Installs `fault` (a [`FailRule`](apiserver_sim::FailRule) converts into one).
    fn inject(&self, fault: impl Into<Fault>) -> Result<(), FaultError>;
    /// Removes every pending fault.
    fn clear_faults(&self);
    /// Ends every open watch now, cleanly (without an `ERROR` event).
    fn drop_watches(&self);
    /// Cuts every open connection at once; new ones are closed as soon as they are accepted
    /// for `downtime`.
    fn restart(&self, downtime: Duration);
    /// Compaction on demand: from now on, watches from an older resourceVersion, exact lists
    /// of one and continue tokens from before are answered 410 Expired. Returns the
    /// resourceVersion compacted to (the server's current one).
    fn compact(&self) -> impl Future<Output = Result<u64, FaultError>> + Send;
    /// Requests received with `verb` for `resource` (the plural, or `<plural>/<subresource>`),
    /// counted the simulator's way (faulted requests too).
    fn request_count(&self, verb: &str, resource: &str) -> u64;
    /// Sets every request count back to 0.
    fn reset_request_counts(&self);
    /// Watch streams open now.
    fn open_watches(&self) -> usize;
    /// The watch-list switch: how watches that ask for a streaming list
    /// (`sendInitialEvents`) are treated — served, refused with 422 as by a server with the
    /// WatchList feature off, or served as plain watches as by a server that predates it.
    fn set_watch_list_mode(&self, mode: WatchListMode);
    /// Bookmarks on demand: every open watch that allows bookmarks gets a `BOOKMARK` with the
    /// server's current resourceVersion at its next event boundary. Returns that
    /// resourceVersion. Asked once the events of the test's own writes to the watched
    /// collections have arrived (a bookmark says every event before it was sent).
    fn send_bookmarks(&self) -> impl Future<Output = Result<u64, FaultError>> + Send;
}

impl InjectFaults for ApiServer {
    /// A status fault is the simulator's own [`FailRule`](apiserver_sim::FailRule); the wire
    /// effects are [`FaultError::Unsupported`].
    fn inject(&self, fault: impl Into<Fault>) -> Result<(), FaultError> {
        let fault = fault.into();
        let rule = fault.to_fail_rule().ok_or(FaultError::Unsupported {
            effect: fault.effect.name(),
            server: "the simulator",
        })?;
        self.try_fail_next(rule)
            .map_err(|e| FaultError::Invalid(e.to_string()))
    }

    fn clear_faults(&self) {
        ApiServer::clear_faults(self);
    }

    fn drop_watches(&self) {
        ApiServer::drop_watches(self);
    }

    fn restart(&self, downtime: Duration) {
        ApiServer::restart(self, downtime);
    }

    async fn compact(&self) -> Result<u64, FaultError> {
        Ok(ApiServer::compact(self))
    }

    fn request_count(&self, verb: &str, resource: &str) -> u64 {
        ApiServer::request_count(self, verb, resource)
    }

    fn reset_request_counts(&self) {
        ApiServer::reset_request_counts(self);
    }

    fn open_watches(&self) -> usize {
        ApiServer::open_watches(self)
    }

    fn set_watch_list_mode(&self, mode: WatchListMode) {
        ApiServer::set_watch_list_mode(self, mode);
    }

    /// The simulator's own bookmarks, at its resourceVersion when they go out (the one
    /// returned, unless something is written meanwhile).
    async fn send_bookmarks(&self) -> Result<u64, FaultError> {
        let rv = self.resource_version();
        ApiServer::send_bookmarks(self);
        Ok(rv)
    }
}
