//! Helpers shared by the informer's integration tests: config maps on the simulator, a recording
//! handler, a running informer, and polling with a deadline.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ApiServer;
use informer::{DeletedObject, ResourceEventHandler, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::ObjectMeta;
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const NS: &str = "default";

/// A config map in the test namespace.
pub fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..ObjectMeta::default()
        },
        data: Some([("v".to_string(), value.to_string())].into()),
        ..ConfigMap::default()
    }
}

/// Creates or replaces a config map on the server (without HTTP); returns its resource version.
pub fn put(server: &ApiServer, name: &str, value: &str) -> String {
    let obj = cm(name, value);
    let stored = match server.replace(&obj) {
        Ok(stored) => stored,
        Err(_) => server.create(&obj).unwrap(),
    };
    stored.metadata.resource_version.unwrap()
}

/// Deletes a config map on the server (without HTTP).
pub fn remove(server: &ApiServer, name: &str) {
    server.delete("", "configmaps", Some(NS), name).unwrap();
}

/// name → resource version of every config map on the server.
pub fn server_state(server: &ApiServer) -> BTreeMap<String, String> {
    server
        .list::<ConfigMap>()
        .into_iter()
        .map(|cm| {
            (
                cm.metadata.name.unwrap(),
                cm.metadata.resource_version.unwrap(),
            )
        })
        .collect()
}

/// name → resource version of every config map in an informer's cache.
pub fn cache_state(informer: &SharedIndexInformer<ConfigMap>) -> BTreeMap<String, String> {
    informer
        .indexer()
        .list()
        .iter()
        .map(|cm| (name(cm), rv(cm)))
        .collect()
}

pub fn name(obj: &ConfigMap) -> String {
    obj.metadata.name.clone().unwrap_or_default()
}

pub fn rv(obj: &ConfigMap) -> String {
    obj.metadata.resource_version.clone().unwrap_or_default()
}

/// An informer over the test namespace's config maps.
pub fn config_map_informer(
    server: &ApiServer,
    resync: Duration,
) -> Arc<SharedIndexInformer<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), NS);
    Arc::new(
        SharedIndexInformer::for_api(api)
            .resync_period(resync)
            .build(),
    )
}

/// A running informer task.
pub struct Running {
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

pub fn spawn(informer: &Arc<SharedIndexInformer<ConfigMap>>) -> Running {
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let informer = Arc::clone(informer);
        let shutdown = shutdown.clone();
        async move { informer.run(shutdown).await }
    });
    Running { shutdown, task }
}

impl Running {
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap();
    }
}

/// One notification as a [`Recorder`] saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// name, rv, is_in_initial_list
    Add(String, String, bool),
    /// name, old rv, new rv, old and new are the same `Arc`
    Update(String, String, String, bool),
    /// name, rv of the last known state, is a tombstone
    Delete(String, Option<String>, bool),
}

impl Event {
    pub fn name(&self) -> &str {
        match self {
            Event::Add(name, ..) | Event::Update(name, ..) | Event::Delete(name, ..) => name,
        }
    }
}

/// A handler that records every notification and applies it to its own map. It can wait for a
/// permit of a gate before each call, sleep per call, and panic on the add of one name.
#[derive(Clone, Default)]
pub struct Recorder {
    pub name: String,
    events: Arc<Mutex<Vec<Event>>>,
    state: Arc<Mutex<BTreeMap<String, String>>>,
    gate: Option<Arc<Semaphore>>,
    delay: Duration,
    panic_on_add: Option<String>,
}

impl Recorder {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Waits for a permit of the returned gate before every call.
    pub fn gated(mut self) -> (Self, Arc<Semaphore>) {
        let gate = Arc::new(Semaphore::new(0));
        self.gate = Some(Arc::clone(&gate));
        (self, gate)
    }

    /// Sleeps `delay` in every call.
    pub fn slow(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Panics when told about the add of `name`.
    pub fn panic_on_add(mut self, name: &str) -> Self {
        self.panic_on_add = Some(name.into());
        self
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    pub fn len(&self) -> usize {
        self.events.lock().len()
    }

    /// The map the handler built from its notifications.
    pub fn state(&self) -> BTreeMap<String, String> {
        self.state.lock().clone()
    }

    async fn pace(&self) {
        if let Some(gate) = &self.gate {
            gate.acquire().await.unwrap().forget();
        }
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

impl ResourceEventHandler<ConfigMap> for Recorder {
    async fn on_add(&self, obj: Arc<ConfigMap>, is_in_initial_list: bool) {
        self.pace().await;
        let n = name(&obj);
        if self.panic_on_add.as_deref() == Some(n.as_str()) {
            panic!("{} refuses to add {n}", self.name);
        }
        self.state.lock().insert(n.clone(), rv(&obj));
        self.events
            .lock()
            .push(Event::Add(n, rv(&obj), is_in_initial_list));
    }

    async fn on_update(&self, old: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        self.pace().await;
        let n = name(&new);
        self.state.lock().insert(n.clone(), rv(&new));
        let same = Arc::ptr_eq(&old, &new);
        self.events
            .lock()
            .push(Event::Update(n, rv(&old), rv(&new), same));
    }

    async fn on_delete(&self, obj: DeletedObject<ConfigMap>) {
        self.pace().await;
        let n = match &obj {
            DeletedObject::Known(obj) => name(obj),
            DeletedObject::Unknown(tombstone) => tombstone.key.name().to_owned(),
        };
        self.state.lock().remove(&n);
        let last = obj.object().map(|obj| rv(obj));
        self.events
            .lock()
            .push(Event::Delete(n, last, obj.is_tombstone()));
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// How long [`eventually`] waits in wall-clock time at least, whatever its limit in tokio time.
///
/// In a paused-time test, tokio's clock jumps ahead whenever the runtime waits for nothing but
/// I/O, so on a loaded machine a slow loopback round trip to the simulator can use up a limit of
/// minutes of tokio time within milliseconds. The floor keeps such a test from failing early.
const WALL_CLOCK_FLOOR: Duration = Duration::from_secs(20);

/// Polls `condition` every 10 ms until it holds; panics once `limit` of tokio time (instant in
/// paused tests) and [`WALL_CLOCK_FLOOR`] of real time have both passed.
pub async fn eventually(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    let wall_clock_deadline = std::time::Instant::now() + WALL_CLOCK_FLOOR;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline
                || std::time::Instant::now() < wall_clock_deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
