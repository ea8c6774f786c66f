//! [`ApiServer`]: start, connect, seed, inspect, inject faults, shut down.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kube::config::Kubeconfig;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::faults::chaos::config::ChaosConfig;
use crate::faults::chaos::stats::ChaosStats;
use crate::faults::fail_rules::FailRule;
use crate::faults::server_faults::ServerFaults;
use crate::kinds::resource_info::{GroupResource, ResourceInfo};
use crate::shared::{ServerConfig, Shared, WatchListMode};

/// Namespaces that exist from startup.
pub const DEFAULT_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Builder of an [`ApiServer`].
#[derive(Debug, Clone, Default)]
pub struct ApiServerBuilder {
    port: u16,
    config: ServerConfig,
}

impl ApiServerBuilder {
    /// Listen on this port of 127.0.0.1 (default 0: any free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Events retained per resource for watch resumption (default 10 000).
    pub fn history_limit(mut self, n: usize) -> Self {
        self.config.store.history_limit = n;
        self
    }

    /// Per-resource watch fan-out buffer; a watcher lagging further behind is closed (default 65 536).
    pub fn watch_buffer(mut self, n: usize) -> Self {
        self.config.store.broadcast_capacity = n;
        self
    }

    /// Interval of periodic watch bookmarks (default 60 s; sent only when the RV moved).
    pub fn bookmark_interval(mut self, d: Duration) -> Self {
        self.config.bookmark_interval = d;
        self
    }

    /// Watch duration when a client sends no `timeoutSeconds` (default 30 min).
    pub fn default_watch_timeout(mut self, d: Duration) -> Self {
        self.config.default_watch_timeout = d;
        self
    }

    /// Largest request body accepted, in bytes (default [`crate::BODY_LIMIT`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// Enables the workload simulator (off unless called): `delay` after a Deployment's
    /// spec (generation) or replica count changes, its status converges to the spec
    /// (`observedGeneration`, `replicas`, `updatedReplicas`, `readyReplicas`,
    /// `availableReplicas` = `spec.replicas`, default 1) with `Available=True`
    /// (`MinimumReplicasAvailable`) and `Progressing=True` (`NewReplicaSetAvailable`)
    /// conditions. The status is written like a `/status` update, so watchers see MODIFIED
    /// and the resourceVersion moves; a status that already matches is never rewritten,
    /// and deleting Deployments are skipped. Timing uses Tokio time (paused-time tests
    /// work). 1 s is a typical value (the default of the binary's `--workloads`).
    pub fn workload_simulator(mut self, delay: Duration) -> Self {
        self.config.workload_delay = Some(delay);
        self
    }

    /// Enables chaos mode (off unless called): from the moment the server starts, a task
    /// it owns drops watches, compacts history and restarts the server on a timeline
    /// seeded by `config.seed`, and a seeded fraction of API requests fail (500/503, 429
    /// with `Retry-After`), are delayed or are answered in tiny writes, at the rates of
    /// `config.profile` (see [`crate::ChaosRates`]). Faults injected are counted in
    /// [`ApiServer::chaos_stats`]; [`ApiServer::stop_chaos`] ends them (to let clients
    /// converge before checking). `/__sim/*`, health, version and discovery requests are
    /// never failed.
    pub fn chaos(mut self, config: ChaosConfig) -> Self {
        self.config.chaos = Some(config);
        self
    }

    /// Binds the socket, creates the default namespaces and starts serving.
    /// Must be called inside a Tokio runtime.
    pub async fn start(self) -> Result<ApiServer> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind {
                addr: addr.to_string(),
                source,
            })?;
        let local = listener.local_addr().map_err(|source| Error::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let shared = Shared::new(self.config);
        let _ = shared.addr.set(local);
        {
            let mut st = shared.state.lock();
            let info = st
                .lookup("", "v1", "namespaces")
                .ok_or_else(|| Error::UnknownResource("namespaces".into()))?;
            for ns in DEFAULT_NAMESPACES {
                crate::ops::create(
                    &mut st,
                    &info,
                    "v1",
                    None,
                    json!({"metadata": {"name": ns}}),
                    &Default::default(),
                )?;
            }
        }
        let serve = tokio::spawn(crate::http::serve(listener, shared.clone()));
        let controllers = tokio::spawn(crate::controllers::run(shared.clone()));
        let mut tasks = vec![serve, controllers];
        if shared.chaos.is_some() {
            tasks.push(tokio::spawn(run_chaos(shared.clone())));
        }
        if let Some(delay) = shared.config.workload_delay {
            tasks.push(tokio::spawn(crate::controllers::workloads::run(
                shared.clone(),
                delay,
            )));
        }
        tracing::info!(addr = %local, "apiserver-sim listening");
        Ok(ApiServer {
            shared,
            addr: local,
            tasks,
        })
    }
}

/// The chaos timeline task (see [`ApiServerBuilder::chaos`]), until chaos stops or the
/// server shuts down.
async fn run_chaos(shared: Arc<Shared>) {
    let Some(chaos) = &shared.chaos else {
        return;
    };
    let mut shutdown = shared.shutdown.subscribe();
    let shutdown = crate::shared::shutting_down(&mut shutdown);
    crate::faults::chaos::runner::run(chaos, &*shared, shutdown).await;
}

/// An API server simulator serving on loopback until dropped or [`ApiServer::shutdown`].
pub struct ApiServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
    }
}

/// The resource and version an object's `apiVersion` and `kind` select.
fn resolve(st: &crate::store::State, obj: &Value) -> Result<(Arc<ResourceInfo>, String)> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = av.split_once('/').unwrap_or(("", av));
    st.resources
        .values()
        .find(|r| r.info.kind == kind && r.info.group == group && r.info.serves(version))
        .map(|r| (r.info.clone(), version.to_string()))
        .ok_or_else(|| Error::UnknownResource(format!("{kind} in {av}")))
}

/// Creates an object in the store, as a POST would (namespace "default" when missing).
fn create_locked(
    st: &mut crate::store::State,
    info: &ResourceInfo,
    version: &str,
    obj: Value,
) -> Result<Arc<Value>> {
    let ns = crate::api::meta::field(&obj, "namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    let ns = match (info.namespaced, ns) {
        (true, None) => Some("default".to_string()),
        (_, ns) => ns,
    };
    Ok(crate::ops::create(
        st,
        info,
        version,
        ns.as_deref(),
        obj,
        &Default::default(),
    )?)
}

/// Replaces an object in the store, as a PUT would; unconditional without
/// `metadata.resourceVersion`.
fn replace_locked(
    st: &mut crate::store::State,
    info: &ResourceInfo,
    version: &str,
    obj: Value,
) -> Result<Arc<Value>> {
    let ns = if info.namespaced {
        Some(crate::api::meta::namespace(&obj).to_string()).filter(|n| !n.is_empty())
    } else {
        None
    };
    let ns = ns.or_else(|| info.namespaced.then(|| "default".to_string()));
    let name = crate::api::meta::name(&obj).to_string();
    let opts = crate::api::query::WriteOptions {
        unconditional: true,
        ..Default::default()
    };
    Ok(crate::ops::update(
        st,
        info,
        version,
        ns.as_deref(),
        &name,
        obj,
        crate::ops::Part::Main,
        &opts,
    )?)
}

impl ApiServer {
    /// A builder with defaults (any free port).
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }

    /// Starts a server with defaults.
    pub async fn start() -> Result<Self> {
        Self::builder().start().await
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A `kube::Client` for this server (default namespace `default`).
    pub fn client(&self) -> Result<kube::Client> {
        let uri: http::Uri = self
            .url()
            .parse()
            .map_err(|e: http::uri::InvalidUri| Error::Client(e.to_string()))?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        kube::Client::try_from(config).map_err(|e| Error::Client(e.to_string()))
    }

    fn kubeconfig_json(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "apiserver-sim", "cluster": {"server": self.url()}}],
            "users": [{"name": "apiserver-sim", "user": {}}],
            "contexts": [{"name": "apiserver-sim",
                          "context": {"cluster": "apiserver-sim", "user": "apiserver-sim", "namespace": "default"}}],
            "current-context": "apiserver-sim",
        })
    }

    /// A kubeconfig pointing at this server (no credentials), as `kube::Config` reads it.
    pub fn kubeconfig(&self) -> Result<Kubeconfig> {
        Ok(serde_json::from_value(self.kubeconfig_json())?)
    }

    /// Writes the kubeconfig (JSON, which kubectl reads as YAML) to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let mut text = serde_json::to_string_pretty(&self.kubeconfig_json())?;
        text.push('\n');
        std::fs::write(path, text).map_err(|source| Error::WriteKubeconfig {
            path: path.display().to_string(),
            source,
        })
    }

    /// Stops serving: ends watches and connections, waits for the accept loop.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.send_replace(true);
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
    }

    // ----- seed and inspect -----------------------------------------------------------

    fn info(&self, group: &str, version: &str, plural: &str) -> Result<Arc<ResourceInfo>> {
        self.shared
            .state
            .lock()
            .lookup(group, version, plural)
            .ok_or_else(|| Error::UnknownResource(format!("{plural}.{group}/{version}")))
    }

    /// Creates a typed object directly in the store (as a POST would, without HTTP).
    pub fn create<K>(&self, obj: &K) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let info = self.info(&K::group(&()), &K::version(&()), &K::plural(&()))?;
        let value = serde_json::to_value(obj)?;
        let stored = self.create_in(&info, &K::version(&()), value)?;
        Ok(serde_json::from_value(stored)?)
    }

    /// The resource and version an object's `apiVersion` and `kind` select.
    fn info_for(&self, obj: &Value) -> Result<(Arc<ResourceInfo>, String)> {
        resolve(&self.shared.state.lock(), obj)
    }

    /// Creates an object given as JSON; its `apiVersion` and `kind` select the resource.
    pub fn create_json(&self, obj: Value) -> Result<Value> {
        let (info, version) = self.info_for(&obj)?;
        self.create_in(&info, &version, obj)
    }

    /// Replaces an object given as JSON, as a PUT would (status kept when the type has a
    /// status subresource). Without `metadata.resourceVersion` the write is unconditional.
    pub fn replace_json(&self, obj: Value) -> Result<Value> {
        let (info, version) = self.info_for(&obj)?;
        let stored = replace_locked(&mut self.shared.state.lock(), &info, &version, obj)?;
        Ok((*stored).clone())
    }

    /// Creates many objects given as JSON (each as [`ApiServer::create_json`] would) with
    /// one lock acquisition per few hundred writes and without copying the stored objects
    /// back: the fast way to seed thousands of objects. Stops at the first refused write
    /// (the earlier ones stay) and otherwise returns the global resourceVersion after the
    /// last write.
    pub fn create_many(&self, objs: impl IntoIterator<Item = Value>) -> Result<u64> {
        self.write_many(objs, |st, info, version, obj| {
            create_locked(st, info, version, obj).map(drop)
        })
    }

    /// Replaces many objects given as JSON (each as [`ApiServer::replace_json`] would), in
    /// order, like [`ApiServer::create_many`]: the fast way to produce a storm of watch
    /// events. Returns the global resourceVersion after the last write.
    pub fn replace_many(&self, objs: impl IntoIterator<Item = Value>) -> Result<u64> {
        self.write_many(objs, |st, info, version, obj| {
            replace_locked(st, info, version, obj).map(drop)
        })
    }

    fn write_many(
        &self,
        objs: impl IntoIterator<Item = Value>,
        write: impl Fn(&mut crate::store::State, &ResourceInfo, &str, Value) -> Result<()>,
    ) -> Result<u64> {
        /// Writes per lock acquisition, so that requests and watches interleave.
        const CHUNK: usize = 256;
        let mut objs = objs.into_iter().peekable();
        // The resource of the previous object (batches are usually of one type), valid
        // while the registry version is unchanged.
        let mut last: Option<(u64, String, String, Arc<ResourceInfo>, String)> = None;
        loop {
            let mut st = self.shared.state.lock();
            for _ in 0..CHUNK {
                let Some(obj) = objs.next() else {
                    return Ok(st.rv);
                };
                let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
                let hit = last.as_ref().is_some_and(|(reg, a, k, _, _)| {
                    *reg == st.registry_version && a == av && k == kind
                });
                if !hit {
                    let (info, version) = resolve(&st, &obj)?;
                    let reg = st.registry_version;
                    last = Some((reg, av.to_string(), kind.to_string(), info, version));
                }
                if let Some((_, _, _, info, version)) = &last {
                    write(&mut st, info, version, obj)?;
                }
            }
            if objs.peek().is_none() {
                return Ok(st.rv);
            }
        }
    }

    /// Replaces a typed object (see [`ApiServer::replace_json`]).
    pub fn replace<K>(&self, obj: &K) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let mut value = serde_json::to_value(obj)?;
        if let Some(m) = value.as_object_mut() {
            m.insert(
                "apiVersion".into(),
                Value::String(K::api_version(&()).into_owned()),
            );
            m.insert("kind".into(), Value::String(K::kind(&()).into_owned()));
        }
        Ok(serde_json::from_value(self.replace_json(value)?)?)
    }

    /// Deletes an object as a DELETE with default options would (finalizers honoured,
    /// dependents collected in the background). `group` is "" for the core group.
    pub fn delete(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<()> {
        let info = {
            let st = self.shared.state.lock();
            st.resource(&GroupResource::new(group, plural))
                .map(|r| r.info.clone())
        }
        .ok_or_else(|| Error::UnknownResource(format!("{plural}.{group}")))?;
        crate::ops::delete(
            &mut self.shared.state.lock(),
            &info,
            namespace.unwrap_or(""),
            name,
            &crate::ops::DeleteOptions::default(),
        )?;
        Ok(())
    }

    fn create_in(&self, info: &ResourceInfo, version: &str, obj: Value) -> Result<Value> {
        let stored = create_locked(&mut self.shared.state.lock(), info, version, obj)?;
        Ok((*stored).clone())
    }

    /// Every object of a resource as the server stores it, in key order
    /// (`group` is "" for the core group).
    pub fn objects(&self, group: &str, plural: &str) -> Vec<Value> {
        let st = self.shared.state.lock();
        st.resource(&GroupResource::new(group, plural))
            .map(|r| r.objects.values().map(|v| (*v.obj).clone()).collect())
            .unwrap_or_default()
    }

    /// Every object of a typed resource, decoded (objects that fail to decode are skipped
    /// with a warning).
    pub fn list<K>(&self) -> Vec<K>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        self.objects(&K::group(&()), &K::plural(&()))
            .into_iter()
            .filter_map(|v| match serde_json::from_value(v) {
                Ok(k) => Some(k),
                Err(e) => {
                    tracing::warn!(error = %e, "stored object does not decode as the requested type");
                    None
                }
            })
            .collect()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.state.lock().rv
    }

    /// Runs the background controllers (CRD, namespace, garbage collector) until they
    /// have nothing left to do.
    pub async fn settle(&self) {
        crate::controllers::run_until_quiet(&self.shared);
        tokio::task::yield_now().await;
    }

    // ----- faults ---------------------------------------------------------------------

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

    /// Number of watch streams currently open (a client that disconnects is dropped promptly).
    pub fn open_watches(&self) -> usize {
        self.shared
            .open_watches
            .load(std::sync::atomic::Ordering::SeqCst)
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

    // ----- request counts -------------------------------------------------------------

    /// Requests received for `resource` (plural, e.g. `pods`, or a CRD plural; `pods/status`
    /// for a subresource) with `verb`: one of get, list, watch, create, update, patch,
    /// delete, deletecollection (a GET with `watch=true` or under `/watch/` is a watch).
    /// Every request that reached routing counts, including ones failed by a fault rule,
    /// by the unready fault, or answered 404 because the resource is not served.
    pub fn request_count(&self, verb: &str, resource: &str) -> u64 {
        self.shared.requests.get(verb, resource)
    }

    /// Sets every request count back to 0.
    pub fn reset_request_counts(&self) {
        self.shared.requests.reset();
    }

    /// Every non-zero request count: resource → verb → count (what `GET /__sim/requests`
    /// returns).
    pub fn request_counts(
        &self,
    ) -> std::collections::BTreeMap<String, std::collections::BTreeMap<&'static str, u64>> {
        self.shared.requests.snapshot()
    }

    /// Removes every pending failure rule.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().clear();
    }
}
