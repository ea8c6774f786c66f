//! Unit-test support: a processing path fed by hand through a `DeltaFifo`, and a recording
//! handler.

use std::sync::Arc;
use std::time::Duration;

use deltafifo::{DeltaFifo, DeltaFifoOptions};
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use parking_lot::Mutex;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::handler::{DeletedObject, ResourceEventHandler};
use crate::process::process_loop;
use crate::processor::Processor;
use crate::registration::Registration;

pub(crate) fn cm(name: &str, rv: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

fn name(obj: &ConfigMap) -> String {
    obj.metadata.name.clone().unwrap_or_default()
}

fn rv(obj: &ConfigMap) -> String {
    obj.metadata.resource_version.clone().unwrap_or_default()
}

/// What a [`Recorder`] saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// name, rv, is_in_initial_list
    Add(String, String, bool),
    /// name, old rv, new rv, old and new are the same Arc
    Update(String, String, String, bool),
    /// name, rv of the last state (if any), is a tombstone
    Delete(String, Option<String>, bool),
}

/// Records every notification; optionally waits for a permit per call and panics on one name.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    pub(crate) events: Arc<Mutex<Vec<Event>>>,
    pub(crate) gate: Option<Arc<Semaphore>>,
    pub(crate) panic_on: Option<String>,
    pub(crate) name: String,
}

impl Recorder {
    pub(crate) fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    /// A recorder that waits for a permit of the returned semaphore before every call.
    pub(crate) fn gated(name: &str) -> (Self, Arc<Semaphore>) {
        let gate = Arc::new(Semaphore::new(0));
        let recorder = Self {
            gate: Some(Arc::clone(&gate)),
            ..Self::named(name)
        };
        (recorder, gate)
    }

    pub(crate) fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    async fn record(&self, object_name: &str, event: Event) {
        if let Some(gate) = &self.gate
            && let Ok(permit) = gate.acquire().await
        {
            permit.forget();
        }
        if self.panic_on.as_deref() == Some(object_name) {
            panic!("recorder {} refuses {object_name}", self.name);
        }
        self.events.lock().push(event);
    }
}

impl ResourceEventHandler<ConfigMap> for Recorder {
    async fn on_add(&self, obj: Arc<ConfigMap>, is_in_initial_list: bool) {
        let n = name(&obj);
        self.record(&n, Event::Add(n.clone(), rv(&obj), is_in_initial_list))
            .await;
    }

    async fn on_update(&self, old: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        let n = name(&new);
        let same = Arc::ptr_eq(&old, &new);
        self.record(&n, Event::Update(n.clone(), rv(&old), rv(&new), same))
            .await;
    }

    async fn on_delete(&self, obj: DeletedObject<ConfigMap>) {
        let n = match &obj {
            DeletedObject::Known(obj) => name(obj),
            DeletedObject::Unknown(tombstone) => tombstone.key.name().to_owned(),
        };
        let last = obj.object().map(|obj| rv(obj));
        self.record(&n, Event::Delete(n.clone(), last, obj.is_tombstone()))
            .await;
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// The informer's processing path without a reflector: the test writes to `fifo` (as a reflector
/// would, with [`resync`](Harness::resync) for a tick of its resync timer) and the harness pops
/// into `cache` and the processor's listeners.
pub(crate) struct Harness {
    pub(crate) cache: Indexer<ConfigMap>,
    pub(crate) processor: Arc<Processor<ConfigMap>>,
    pub(crate) fifo: DeltaFifo<ConfigMap>,
    synced: watch::Sender<bool>,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Harness {
    pub(crate) fn new(default_resync: Duration) -> Self {
        let cache = Indexer::new(Indexers::new().with_namespace());
        let processor = Arc::new(Processor::new(default_resync));
        let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())));
        Self {
            cache,
            processor,
            fifo,
            synced: watch::Sender::new(false),
            shutdown: CancellationToken::new(),
            tasks: Vec::new(),
        }
    }

    /// A tick of the reflector's resync timer, gated by the handlers' schedules as the informer
    /// gates it.
    pub(crate) fn resync(&self) {
        if self.processor.should_resync() {
            self.fifo.resync().unwrap();
        }
    }

    /// Registers `handler` as the informer does.
    pub(crate) fn add(&self, handler: Recorder, resync: Duration) -> Registration {
        let (listener_id, listener) = self
            .processor
            .add(handler, resync, || self.cache.list())
            .unwrap();
        Registration {
            informer_id: 0,
            listener_id,
            listener,
            informer_synced: self.synced.subscribe(),
        }
    }

    /// Starts the listeners and the pop loop.
    pub(crate) fn start(&mut self) {
        self.processor.start();
        let (fifo, cache, processor, shutdown) = (
            self.fifo.clone(),
            self.cache.clone(),
            Arc::clone(&self.processor),
            self.shutdown.clone(),
        );
        self.tasks.push(tokio::spawn(async move {
            process_loop(&fifo, &cache, &processor, &shutdown).await;
        }));
        let (fifo, synced) = (self.fifo.clone(), self.synced.clone());
        self.tasks.push(tokio::spawn(async move {
            fifo.synced().await;
            synced.send_replace(true);
        }));
    }

    pub(crate) async fn stop(mut self) {
        self.shutdown.cancel();
        self.fifo.close();
        let mut tasks = self.tasks.drain(..);
        if let Some(pop_loop) = tasks.next() {
            pop_loop.await.unwrap();
        }
        tasks.for_each(|task| task.abort());
        self.processor.stop().await;
    }
}

/// Polls `condition` until it holds; panics after 10 s (of test time).
pub(crate) async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// A tracing subscriber that keeps each event as a line of `LEVEL field=value ...`, for tests of
/// what is logged. Install it with `tracing::subscriber::set_default` in a current-thread test,
/// so the tasks the test spawns log to it too.
#[derive(Clone, Default)]
pub(crate) struct LogCapture {
    lines: Arc<Mutex<Vec<String>>>,
}

impl LogCapture {
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().clone()
    }
}

impl tracing::Subscriber for LogCapture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = event.metadata().level().to_string();
        event.record(
            &mut |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                line.push_str(&format!(" {}={value:?}", field.name()));
            },
        );
        self.lines.lock().push(line);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
