//! Unit-test support: a processing path fed by hand through a `DeltaFifo`, and a recording
//! handler.

use std::sync::Arc;
use std::time::Duration;

use deltafifo::{DeltaFifo, DeltaFifoOptions};
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::process::{cached_entries, process_loop};
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

/// The workspace's recording handler (`testkit`'s), compiled into this crate: the informer's
/// unit tests cannot use `testkit` for it, since its `ResourceEventHandler` would be the trait of
/// a second copy of this crate.
#[path = "../../testkit/src/recorder.rs"]
#[allow(dead_code)] // the unit tests use only part of it
mod recorder;

pub(crate) use recorder::{Event, Recorder};
pub(crate) use testkit::LogCapture;

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
            .add(handler, resync, || cached_entries(&self.cache))
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
pub(crate) async fn eventually(what: &str, condition: impl FnMut() -> bool) {
    testkit::eventually(what, Duration::from_secs(10), condition).await;
}
