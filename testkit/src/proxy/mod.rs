//! [`FaultProxy`]: a fault-injecting HTTP proxy a test puts between a `kube::Client` and any
//! API server — the simulator, or a real kube-apiserver over TLS — driven by the same fault
//! description the tests give the simulator ([`FailRule`], or a [`Fault`] with a wire
//! [`Effect`](crate::fault::Effect)), so a fault test runs against either server unchanged.
//!
//! The client side is plain HTTP/1.1 on loopback: [`FaultProxy::client`] or
//! [`FaultProxy::config`] point a client at it. The proxy reaches the server with kube's own
//! client built from the server's configuration (its CA, its credentials); a request with an
//! `Authorization` header of its own is forwarded with it instead (a test's other identities
//! keep theirs).
//!
//! Requests are classified by verb, resource and namespace from their method, path and query
//! as the simulator classifies them, counted as it counts them
//! ([`FaultProxy::request_count`]), and matched against the pending faults in its order and
//! with its seeded draws. The server-wide faults are the proxy's: it ends the watches and cuts
//! the connections that go through it, and it plays compaction by answering 410 Expired as a
//! server compacted at that resourceVersion answers: to a watch from an older version (in
//! band), an exact list at one, and a continue token from before. It also plays the
//! simulator's watch-list switch ([`InjectFaults::set_watch_list_mode`]) and its bookmarks on
//! demand ([`InjectFaults::send_bookmarks`]), and can hold new watches back while a test
//! changes things ([`FaultProxy::hold_watches`]).
//!
//! Differences from the simulator's own injection: a fault selects a request before the
//! server has seen it, so it is used up also by a request the server would refuse (an unknown
//! resource, a forbidden one); errors are JSON whatever the client accepts.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use apiserver_sim::{ApiServer, FailRule};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use testkit::fault::InjectFaults;
//! use testkit::proxy::FaultProxy;
//!
//! let server = ApiServer::start().await?;
//! let proxy = FaultProxy::start(kube::Config::new(server.url().parse()?)).await?;
//! let api: Api<ConfigMap> = Api::namespaced(proxy.client()?, "default");
//! proxy.fail_next(FailRule::new("list", "configmaps", 500, 1));
//! assert!(api.list(&Default::default()).await.is_err());
//! assert!(api.list(&Default::default()).await.is_ok());
//! assert_eq!(proxy.request_count("list", "configmaps"), 2);
//! # Ok(())
//! # }
//! ```

mod answers;
mod body;
mod bookmarks;
mod classify;
mod compaction;
mod counts;
mod framing;
mod rules;
mod serve;
mod state;
mod upstream;
mod watch_list;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{FailRule, WatchListMode};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::fault::{Fault, FaultError, InjectFaults};
use state::State;
use upstream::Upstream;

/// A fault-injecting proxy in front of an API server, listening on loopback. Stops when
/// dropped (or with [`FaultProxy::shutdown`]).
pub struct FaultProxy {
    addr: SocketAddr,
    default_namespace: String,
    state: Arc<State>,
    accept: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// A proxy in front of the server `upstream` describes (its URL, CA and credentials; a
    /// [`TestCluster`](crate::cluster::TestCluster)'s `config()`), on a free loopback port.
    pub async fn start(upstream: kube::Config) -> Result<Self, FaultError> {
        let default_namespace = upstream.default_namespace.clone();
        let state = Arc::new(State::new(Upstream::new(upstream)?));
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| FaultError::Proxy(format!("binding a loopback port: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| FaultError::Proxy(format!("the bound address: {e}")))?;
        let accept = tokio::spawn(serve::accept(listener, Arc::clone(&state)));
        Ok(Self {
            addr,
            default_namespace,
            state,
            accept: Some(accept),
        })
    }

    /// The address the proxy listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy's URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A client configuration pointing at the proxy, without credentials (the proxy adds
    /// the server's), with the server configuration's default namespace. Give it a token
    /// (`auth_info.token`) to be someone else: the proxy forwards it.
    pub fn config(&self) -> Result<kube::Config, FaultError> {
        let url = self
            .url()
            .parse()
            .map_err(|e| FaultError::Proxy(format!("the proxy's URL: {e}")))?;
        let mut config = kube::Config::new(url);
        config.default_namespace.clone_from(&self.default_namespace);
        Ok(config)
    }

    /// A client of the server through the proxy (see [`FaultProxy::config`]).
    pub fn client(&self) -> Result<kube::Client, FaultError> {
        kube::Client::try_from(self.config()?)
            .map_err(|e| FaultError::Proxy(format!("a client of the proxy: {e}")))
    }

    /// Installs a failure rule as the simulator's `ApiServer::fail_next` does: an invalid
    /// rule is logged as an error and not installed ([`InjectFaults::inject`] returns the
    /// error instead).
    pub fn fail_next(&self, rule: FailRule) {
        if let Err(error) = self.inject(rule) {
            tracing::error!(%error, "fault rule not installed");
        }
    }

    /// The pending faults (counted ones with their remaining count).
    pub fn faults(&self) -> Vec<Fault> {
        self.state.rules.lock().faults()
    }

    /// Plays compaction at `resource_version` (see [`InjectFaults::compact`], which
    /// compacts at the server's current one).
    pub fn compact_to(&self, resource_version: u64) {
        self.state.compact_to(resource_version);
    }

    /// Every non-zero request count: resource → verb → count.
    pub fn request_counts(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.state.counts.snapshot()
    }

    /// Holds new watches back: until the returned hold is dropped, a watch request waits in
    /// the proxy before any fault, compaction or the server sees it (it is counted when it
    /// arrives). With [`InjectFaults::drop_watches`], a test changes the server while its
    /// clients cannot watch, as if they were disconnected.
    pub fn hold_watches(&self) -> WatchHold {
        self.state.watches_held.send_modify(|holds| *holds += 1);
        WatchHold(Some(Arc::clone(&self.state)))
    }

    /// Stops listening and cuts every connection.
    pub async fn shutdown(mut self) {
        self.state.shutdown.send_replace(true);
        if let Some(accept) = self.accept.take()
            && let Err(error) = accept.await
        {
            tracing::warn!("fault proxy: the accept loop ended badly: {error}");
        }
    }
}

/// New watches wait in a [`FaultProxy`] while this lives ([`FaultProxy::hold_watches`]); an
/// empty hold holds nothing back.
#[must_use = "the watches are let go when the hold is dropped"]
pub struct WatchHold(Option<Arc<State>>);

impl WatchHold {
    /// A hold that holds nothing back.
    pub(crate) fn empty() -> Self {
        Self(None)
    }
}

impl Drop for WatchHold {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            state.watches_held.send_modify(|holds| *holds -= 1);
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.state.shutdown.send_replace(true);
    }
}

impl InjectFaults for FaultProxy {
    fn inject(&self, fault: impl Into<Fault>) -> Result<(), FaultError> {
        self.state.rules.lock().add(fault.into())
    }

    fn clear_faults(&self) {
        self.state.rules.lock().clear();
    }

    fn drop_watches(&self) {
        self.state.drop_watches();
    }

    fn restart(&self, downtime: Duration) {
        self.state.restart(downtime);
    }

    async fn compact(&self) -> Result<u64, FaultError> {
        let rv = self.state.upstream.current_resource_version().await?;
        self.state.compact_to(rv);
        Ok(rv)
    }

    fn request_count(&self, verb: &str, resource: &str) -> u64 {
        self.state.counts.get(verb, resource)
    }

    fn reset_request_counts(&self) {
        self.state.counts.reset();
    }

    fn open_watches(&self) -> usize {
        self.state.counts.open_watches()
    }

    fn set_watch_list_mode(&self, mode: WatchListMode) {
        *self.state.watch_list.lock() = mode;
    }

    async fn send_bookmarks(&self) -> Result<u64, FaultError> {
        let rv = self.state.upstream.current_resource_version().await?;
        self.state.bookmark_now.send_replace(rv);
        Ok(rv)
    }
}
