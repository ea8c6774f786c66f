//! Unit-test support: a processing path fed by hand through either fifo, and a recording
//! handler.

use std::sync::Arc;
use std::time::Duration;

use deltafifo::{DeltaFifo, InOrderFifo, Queue};
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fifo::{FifoKind, POP_BATCH, delta_fifo, in_order_fifo};
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

/// The workspace's test-per-fifo macro, shared with the integration tests.
#[path = "../tests/common/both_fifos.rs"]
mod both_fifos;

pub(crate) use both_fifos::on_both_fifos;
pub(crate) use testkit::LogCapture;

/// The informer's processing path without a reflector: the test writes to `fifo` (as a reflector
/// would, with [`resync`](Harness::resync) for a tick of its resync timer) and the harness pops
/// into `cache` and the processor's listeners.
pub(crate) struct Harness {
    pub(crate) cache: Indexer<ConfigMap>,
    pub(crate) processor: Arc<Processor<ConfigMap>>,
    pub(crate) fifo: TestFifo,
    synced: watch::Sender<bool>,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Harness {
    /// A harness on the fifo of `kind`, as the informer builds it.
    pub(crate) fn new(kind: FifoKind, default_resync: Duration) -> Self {
        let cache = Indexer::new(Indexers::new().with_namespace());
        let processor = Arc::new(Processor::new(default_resync));
        let fifo = match kind {
            FifoKind::Deltas => TestFifo::Deltas(delta_fifo(&cache, None)),
            FifoKind::InOrder => TestFifo::InOrder(in_order_fifo(None)),
        };
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
        match &self.fifo {
            TestFifo::Deltas(fifo) => self.spawn_loops(fifo.clone()),
            TestFifo::InOrder(fifo) => self.spawn_loops(fifo.clone()),
        }
    }

    /// Spawns the pop loop and the task that publishes the fifo's sync, as the informer runs
    /// them.
    fn spawn_loops<Q: Queue<ConfigMap>>(&mut self, fifo: Q) {
        let (cache, processor, shutdown) = (
            self.cache.clone(),
            Arc::clone(&self.processor),
            self.shutdown.clone(),
        );
        let popping = fifo.clone();
        self.tasks.push(tokio::spawn(async move {
            process_loop(&popping, POP_BATCH, &cache, &processor, &shutdown).await;
        }));
        let synced = self.synced.clone();
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

/// The fifo a [`Harness`] runs on: written through [`Store`] (its `Deref`), as a reflector
/// writes.
#[derive(Clone)]
pub(crate) enum TestFifo {
    Deltas(DeltaFifo<ConfigMap>),
    InOrder(InOrderFifo<ConfigMap>),
}

impl std::ops::Deref for TestFifo {
    type Target = dyn Store<ConfigMap>;

    fn deref(&self) -> &Self::Target {
        match self {
            TestFifo::Deltas(fifo) => fifo,
            TestFifo::InOrder(fifo) => fifo,
        }
    }
}

impl TestFifo {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            TestFifo::Deltas(fifo) => fifo.is_empty(),
            TestFifo::InOrder(fifo) => fifo.is_empty(),
        }
    }

    pub(crate) fn has_synced(&self) -> bool {
        match self {
            TestFifo::Deltas(fifo) => fifo.has_synced(),
            TestFifo::InOrder(fifo) => fifo.has_synced(),
        }
    }

    pub(crate) fn close(&self) {
        match self {
            TestFifo::Deltas(fifo) => fifo.close(),
            TestFifo::InOrder(fifo) => fifo.close(),
        }
    }

    pub(crate) fn synced_resource_version(&self) -> String {
        match self {
            TestFifo::Deltas(fifo) => fifo.synced_resource_version(),
            TestFifo::InOrder(fifo) => fifo.synced_resource_version(),
        }
    }
}
