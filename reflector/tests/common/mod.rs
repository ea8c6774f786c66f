//! Helpers shared by the reflector's integration tests: config maps, a recording
//! lister-watcher, a reflector task, convergence checks and polling with a deadline.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use deltafifo::{Delta, DeltaFifo, DeltaFifoOptions, DeltaType};
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ObjectMeta;
use parking_lot::Mutex;
use reflector::{
    ApiListerWatcher, BackoffStep, Error, ListParams, ListStream, ListerWatcher, ObjectList,
    Reflector, ReflectorOptions, WatchDecoding, WatchParams, WatchStream,
};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use testkit::cluster::{Server, TestCluster, ns};
pub use testkit::config_maps::{OWN_SELECTOR, State, cm, put, state_of};
pub use testkit::eventually;
pub use testkit::fault::InjectFaults;

/// A client without kube's transparent retry of 429/503/504, so the reflector sees them.
pub fn client_without_retry(server: &impl Server) -> kube::Client {
    let mut config = server.test_client_config().unwrap();
    config.default_namespace = ns().into();
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

/// One request the reflector made.
#[derive(Debug, Clone)]
pub struct Call {
    pub verb: &'static str,
    pub resource_version: Option<String>,
    pub limit: Option<u32>,
    pub continue_token: bool,
    pub send_initial_events: bool,
    /// Watches: `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// Watches: `timeoutSeconds`.
    pub timeout: Option<u32>,
    /// Watches: where the reflector asked for the body to be decoded.
    pub decoding: Option<WatchDecoding>,
    pub at: Instant,
}

/// A lister-watcher that records every call before delegating.
pub struct Recorder<K: Clone> {
    inner: Arc<dyn ListerWatcher<K>>,
    pub calls: Mutex<Vec<Call>>,
}

impl<K: Clone> Recorder<K> {
    pub fn new(inner: Arc<dyn ListerWatcher<K>>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            calls: Mutex::new(Vec::new()),
        })
    }

    fn record_list(&self, params: &ListParams) {
        self.calls.lock().push(Call {
            verb: "list",
            resource_version: params.resource_version.clone(),
            limit: params.limit,
            continue_token: params.continue_token.is_some(),
            send_initial_events: false,
            bookmarks: false,
            timeout: None,
            decoding: None,
            at: Instant::now(),
        });
    }

    pub fn calls(&self, verb: &str) -> Vec<Call> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.verb == verb)
            .cloned()
            .collect()
    }
}

#[async_trait::async_trait]
impl<K: Clone + Send + Sync + 'static> ListerWatcher<K> for Recorder<K> {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<K>, Error> {
        self.record_list(params);
        self.inner.list(params).await
    }

    async fn list_stream(&self, params: &ListParams) -> Result<ListStream<K>, Error> {
        self.record_list(params);
        self.inner.list_stream(params).await
    }

    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error> {
        self.watch_with_decoding(params, resource_version, WatchDecoding::default())
            .await
    }

    async fn watch_with_decoding(
        &self,
        params: &WatchParams,
        resource_version: &str,
        decoding: WatchDecoding,
    ) -> Result<WatchStream<K>, Error> {
        self.calls.lock().push(Call {
            verb: "watch",
            resource_version: Some(resource_version.to_string()),
            limit: None,
            continue_token: false,
            send_initial_events: params.send_initial_events,
            bookmarks: params.bookmarks,
            timeout: params.timeout,
            decoding: Some(decoding),
            at: Instant::now(),
        });
        self.inner
            .watch_with_decoding(params, resource_version, decoding)
            .await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// A config-map lister-watcher over `client`, recording its calls.
pub fn config_maps(client: kube::Client) -> Arc<Recorder<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(client, ns());
    Recorder::new(Arc::new(ApiListerWatcher::new(api)))
}

/// A lister-watcher of the test's own config maps (labelled by `TestCluster::put_own`: a whole
/// cluster puts ConfigMaps of its own in every namespace), recording its calls.
pub fn own_config_maps(client: kube::Client) -> Arc<Recorder<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(client, ns());
    Recorder::new(Arc::new(ApiListerWatcher::new(api).labels(OWN_SELECTOR)))
}

/// What the error handler and the backoff observer saw.
#[derive(Default)]
pub struct Seen {
    pub errors: Mutex<Vec<SeenError>>,
    pub backoffs: Mutex<Vec<BackoffStep>>,
}

/// One reported error: its code and reason (when the server sent a status) and its text.
#[derive(Debug, Clone)]
pub struct SeenError {
    pub code: Option<u16>,
    pub reason: Option<String>,
    pub text: String,
}

impl Seen {
    /// Options wired to record into `self`, with a fixed jitter seed, for the paged-list path
    /// that most tests here are about (list, then watch: client-go's behaviour without
    /// streaming lists). The default, a streaming list, is what `streaming_list.rs` tests:
    /// add `.streaming_list(true)` for it.
    pub fn options(self: &Arc<Self>) -> ReflectorOptions {
        let errors = self.clone();
        let backoffs = self.clone();
        ReflectorOptions::default()
            .streaming_list(false)
            .jitter_seed(7)
            .error_handler(move |e| {
                errors.errors.lock().push(SeenError {
                    code: e.code(),
                    reason: e.status().map(|s| s.reason.clone()),
                    text: e.to_string(),
                })
            })
            .on_backoff(move |step| backoffs.backoffs.lock().push(*step))
    }

    pub fn codes(&self) -> Vec<Option<u16>> {
        self.errors.lock().iter().map(|e| e.code).collect()
    }
}

/// A running reflector task.
pub struct Running<K> {
    pub reflector: Arc<Reflector<K>>,
    pub shutdown: CancellationToken,
    pub task: JoinHandle<()>,
}

impl<K> Running<K> {
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap();
    }
}

/// Starts a reflector on its own task.
pub fn spawn<K>(
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    store: Arc<dyn Store<K>>,
    options: ReflectorOptions,
) -> Running<K>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let reflector = Arc::new(Reflector::new(lister_watcher, store, options));
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let (reflector, shutdown) = (reflector.clone(), shutdown.clone());
        async move { reflector.run(shutdown).await }
    });
    Running {
        reflector,
        shutdown,
        task,
    }
}

/// A Secret in the test namespace.
pub fn secret(name: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

/// Writes to another resource move the global resource version past every config map.
pub async fn bump_global_resource_version(server: &TestCluster) {
    for i in 0..5 {
        server.create(&secret(&format!("s-{i}"))).await.unwrap();
    }
}

/// A resourceVersion as a number, to compare versions (a real server's own bookmarks move a
/// reflector's past the versions a test knows of).
pub fn version(resource_version: &str) -> u64 {
    resource_version.parse().unwrap()
}

/// A plain cache to reflect into.
pub fn cache() -> Indexer<ConfigMap> {
    Indexer::new(Indexers::new().with_namespace())
}

/// The store's config maps.
pub fn store_state(store: &dyn Store<ConfigMap>) -> State {
    state_of(store.list().iter().map(|o| &**o))
}

/// Waits until the store equals the server (up to 5 minutes of tokio time: a reflector deep
/// in its backoff ladder waits up to a minute before relisting).
pub async fn converged(server: &impl Server, store: &dyn Store<ConfigMap>) {
    converged_to(
        async || server.config_map_state().await.unwrap(),
        || store_state(store),
    )
    .await;
}

/// [`converged`] for a store of the test's own config maps ([`own_config_maps`]).
pub async fn own_converged(server: &TestCluster, store: &dyn Store<ConfigMap>) {
    converged_to(
        async || server.own_state().await.unwrap(),
        || store_state(store),
    )
    .await;
}

/// Waits until `have` equals `want` (polled), as [`converged`] does.
pub async fn converged_to(mut want: impl AsyncFnMut() -> State, have: impl Fn() -> State) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (want, have) = (want().await, have());
        if want == have {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "store never converged:\nserver {want:?}\nstore  {have:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// An informer's data path without the informer: the reflector feeds a DeltaFifo whose
/// consumer applies each delta to a cache (the fifo's known objects) and logs
/// (type, key, tombstone?) of every delta.
pub struct Pipeline {
    pub fifo: DeltaFifo<ConfigMap>,
    pub cache: Indexer<ConfigMap>,
    pub log: Arc<Mutex<Vec<(DeltaType, String, bool)>>>,
    pub consumer: JoinHandle<()>,
}

impl Pipeline {
    pub fn start() -> Self {
        let cache = cache();
        let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(
            DeltaFifoOptions::new()
                .known_objects(Arc::new(cache.clone()))
                .emit_replaced(true),
        );
        let log: Arc<Mutex<Vec<(DeltaType, String, bool)>>> = Arc::default();
        let consumer = tokio::spawn({
            let (fifo, cache, log) = (fifo.clone(), cache.clone(), log.clone());
            async move {
                while let Ok(()) = fifo
                    .pop(|deltas, _| {
                        let (key, deltas) = deltas.into_parts();
                        for delta in deltas {
                            let tombstone = matches!(&delta, Delta::Deleted(d) if d.is_tombstone());
                            log.lock()
                                .push((delta.delta_type(), key.to_string(), tombstone));
                            match delta {
                                Delta::Deleted(_) => {
                                    cache.delete_key(&key);
                                }
                                Delta::Added(o)
                                | Delta::Updated(o)
                                | Delta::Replaced(o)
                                | Delta::Sync(o) => {
                                    cache.put(&key, o).unwrap();
                                }
                            }
                        }
                    })
                    .await
                {}
            }
        });
        Self {
            fifo,
            cache,
            log,
            consumer,
        }
    }

    /// Closes the fifo and waits for the consumer to drain it.
    pub async fn stop(self) {
        self.fifo.close();
        self.consumer.await.unwrap();
    }
}

/// A reflector over the test's own ConfigMaps (one object, "a") that has listed and opened its
/// watch, on a cluster that injects faults (through a proxy on a real server).
pub struct Watching {
    pub server: TestCluster,
    pub lw: Arc<Recorder<ConfigMap>>,
    pub store: Arc<Indexer<ConfigMap>>,
    pub seen: Arc<Seen>,
    pub running: Running<ConfigMap>,
}

/// Starts a cluster with one ConfigMap ("a") and a reflector into a plain cache, and waits
/// until the cache equals the server and the watch is open.
pub async fn watching() -> Watching {
    watching_objects(&["a"]).await
}

/// [`watching`] with a ConfigMap of value "0" for each of `names`.
pub async fn watching_objects(names: &[&str]) -> Watching {
    let server = TestCluster::start_with_faults().await.unwrap();
    for name in names {
        server.put_own(name, "0").await.unwrap();
    }
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options());
    own_converged(&server, &*store).await;
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    Watching {
        server,
        lw,
        store,
        seen,
        running,
    }
}
