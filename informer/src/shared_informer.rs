//! [`SharedIndexInformer`]: reflector → delta fifo → indexer → handlers.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deltafifo::Queue;
use futures::future::BoxFuture;
use indexer::{Indexer, Indexers, Lister};
use kube::Api;
use parking_lot::Mutex;
use reflector::{ApiListerWatcher, ListerWatcher, Reflector, ReflectorOptions};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::fifo::{FifoKind, POP_BATCH, delta_fifo, in_order_fifo};
use crate::handler::ResourceEventHandler;
use crate::lister_watcher::{BookmarkSink, Observed, RequestCounts};
use crate::process::{cached_entries, process_loop};
use crate::processor::{ListenerBuffer, Phase, Processor};
use crate::registration::Registration;
use crate::transform::TransformFn;
use crate::wait::CacheSynced;
use crate::{Error, Object};

static NEXT_INFORMER_ID: AtomicU64 = AtomicU64::new(1);

/// A cache of one resource kept in step with the API server, whose changes are fanned out to
/// any number of handlers (client-go's `sharedIndexInformer`).
///
/// [`run`](Self::run) lists and watches through a reflector into a fifo (a `DeltaFifo` whose
/// known objects are this informer's [`Indexer`], or an `InOrderFifo`: see [`FifoKind`]); each
/// popped batch of changes is applied to the indexer first, under one write lock, then told to
/// every handler, in one hand-off per handler. Each handler has its own unbounded buffer and
/// task, so a slow handler never delays the fifo or another handler. `run` is one-shot: a
/// stopped informer never restarts.
///
/// Objects are shared as `Arc<K>`: the object the reflector decoded is the one in the cache and
/// the one every handler receives.
pub struct SharedIndexInformer<K: Clone + 'static> {
    id: u64,
    name: String,
    cache: Indexer<K>,
    processor: Arc<Processor<K>>,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    reflector_options: Mutex<Option<ReflectorOptions>>,
    transform: Mutex<Option<TransformFn<K>>>,
    synced: watch::Sender<bool>,
    reflector: OnceLock<Arc<Reflector<K>>>,
    requests: Arc<RequestCounts>,
    fifo_kind: FifoKind,
    /// The most items one pop takes from the fifo.
    pop_batch: usize,
    /// The running fifo's resource version (its consumer's: this informer's cache).
    cache_version: OnceLock<Box<dyn Fn() -> String + Send + Sync>>,
    /// Where the reflector's watches hand their bookmarks: the running fifo.
    bookmarks: Arc<BookmarkSink>,
}

/// Builds a [`SharedIndexInformer`]; from [`SharedIndexInformer::builder`].
pub struct InformerBuilder<K: Clone> {
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    indexers: Indexers<K>,
    resync_period: Duration,
    reflector_options: ReflectorOptions,
    name: Option<String>,
    fifo_kind: FifoKind,
    pop_batch: usize,
}

impl<K: Object> InformerBuilder<K> {
    /// The cache's indices (default: the namespace index alone).
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers = indexers;
        self
    }

    /// How often handlers resync by default (default: never). A handler may ask for its own
    /// period with [`SharedIndexInformer::add_event_handler_with_resync`].
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Options of the reflector (page size, backoff, watch timeout, ...). Its resync period is
    /// set by the informer from the handlers' periods.
    pub fn reflector_options(mut self, options: ReflectorOptions) -> Self {
        self.reflector_options = options;
        self
    }

    /// The informer's name in logs and sync reports (default: the object type).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Which fifo sits between the reflector and the cache (default: [`FifoKind::Deltas`]).
    pub fn fifo(mut self, kind: FifoKind) -> Self {
        self.fifo_kind = kind;
        self
    }

    /// The most items the informer takes from its fifo at once, applied to the cache under one
    /// write lock and handed to each handler in one wake-up (default: 1 000, client-go's batch
    /// size). 1 pops one item at a time, as client-go does with `InOrderInformersBatchProcess`
    /// off; 0 counts as 1.
    pub fn pop_batch(mut self, max_items: usize) -> Self {
        self.pop_batch = max_items.max(1);
        self
    }

    /// The informer, not yet running.
    pub fn build(self) -> SharedIndexInformer<K> {
        let requests = Arc::new(RequestCounts::default());
        let bookmarks = Arc::new(BookmarkSink::default());
        let lister_watcher: Arc<dyn ListerWatcher<K>> = Arc::new(Observed {
            inner: self.lister_watcher,
            counts: Arc::clone(&requests),
            bookmarks: Arc::clone(&bookmarks),
        });
        SharedIndexInformer {
            id: NEXT_INFORMER_ID.fetch_add(1, Ordering::Relaxed),
            name: self
                .name
                .unwrap_or_else(|| std::any::type_name::<K>().to_owned()),
            cache: Indexer::new(self.indexers),
            processor: Arc::new(Processor::new(self.resync_period)),
            lister_watcher,
            reflector_options: Mutex::new(Some(self.reflector_options)),
            transform: Mutex::new(None),
            synced: watch::Sender::new(false),
            reflector: OnceLock::new(),
            requests,
            fifo_kind: self.fifo_kind,
            pop_batch: self.pop_batch,
            cache_version: OnceLock::new(),
            bookmarks,
        }
    }
}

impl<K: Object> SharedIndexInformer<K> {
    /// Starts building an informer that lists and watches through `lister_watcher`.
    pub fn builder(lister_watcher: Arc<dyn ListerWatcher<K>>) -> InformerBuilder<K> {
        InformerBuilder {
            lister_watcher,
            indexers: Indexers::new().with_namespace(),
            resync_period: Duration::ZERO,
            reflector_options: ReflectorOptions::default(),
            name: None,
            fifo_kind: FifoKind::default(),
            pop_batch: POP_BATCH,
        }
    }

    /// Starts building an informer over `api` (its namespace scope included); for selectors,
    /// build an [`ApiListerWatcher`] and use [`builder`](Self::builder).
    pub fn for_api(api: Api<K>) -> InformerBuilder<K> {
        Self::builder(Arc::new(ApiListerWatcher::new(api)))
    }

    /// Adds `handler`, resyncing at the informer's default period. See
    /// [`add_event_handler_with_resync`](Self::add_event_handler_with_resync).
    pub fn add_event_handler<H: ResourceEventHandler<K>>(
        &self,
        handler: H,
    ) -> Result<Registration, Error> {
        let default = self.processor.default_resync();
        self.add_event_handler_with_resync(handler, default)
    }

    /// Adds `handler`, asking for a resync every `resync_period` (0 = never; client-go's rules:
    /// at least [`MIN_RESYNC_PERIOD`](crate::MIN_RESYNC_PERIOD); a period shorter than the
    /// informer's check period lowers it before `run` and is raised to it afterwards).
    ///
    /// Works before and after `run`: a handler added to a running informer first receives the
    /// current cache as initial-list adds, then live notifications, with no gap and no duplicate.
    /// Fails once the informer has stopped.
    pub fn add_event_handler_with_resync<H: ResourceEventHandler<K>>(
        &self,
        handler: H,
        resync_period: Duration,
    ) -> Result<Registration, Error> {
        let (listener_id, listener) = self
            .processor
            .add(handler, resync_period, || cached_entries(&self.cache))?;
        Ok(Registration {
            informer_id: self.id,
            listener_id,
            listener,
            informer_synced: self.synced.subscribe(),
        })
    }

    /// Removes a handler: what is buffered for it is dropped; a call in flight may still run
    /// after this returns (see [`remove_event_handler_and_wait`](Self::remove_event_handler_and_wait)).
    /// Removing twice is fine; a registration of another informer is an error.
    pub fn remove_event_handler(&self, registration: &Registration) -> Result<(), Error> {
        if registration.informer_id != self.id {
            return Err(Error::ForeignRegistration);
        }
        self.processor.remove(registration.listener_id);
        Ok(())
    }

    /// Removes a handler, then waits until its in-flight call (if any) has returned. Must not be
    /// called from inside that handler: it would wait for itself.
    pub async fn remove_event_handler_and_wait(
        &self,
        registration: &Registration,
    ) -> Result<(), Error> {
        self.remove_event_handler(registration)?;
        registration.listener.finished().await;
        Ok(())
    }

    /// Sets a transform applied to every object before it is cached and distributed (never to
    /// tombstones or resyncs), for example [`strip_managed_fields`](crate::strip_managed_fields).
    /// Only before `run`.
    pub fn set_transform(
        &self,
        transform: impl Fn(Arc<K>) -> Result<Arc<K>, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Result<(), Error> {
        let mut slot = self.transform.lock();
        if self.processor.phase() != Phase::NotStarted {
            return Err(Error::AlreadyStarted("set_transform"));
        }
        *slot = Some(Arc::new(transform));
        Ok(())
    }

    /// Adds indices to the cache, built at once from what it holds; allowed until the informer
    /// stops.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        if self.is_stopped() {
            return Err(Error::Stopped);
        }
        Ok(self.cache.add_indexers(indexers)?)
    }

    /// The cache (read-only by contract: writing to it desynchronizes the informer).
    pub fn indexer(&self) -> &Indexer<K> {
        &self.cache
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.cache.clone())
    }

    /// The informer's name in logs and sync reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the cache holds the initial list. Says nothing about handlers: use their
    /// [`Registration::has_synced`].
    pub fn has_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until [`has_synced`](Self::has_synced).
    pub async fn synced(&self) {
        let _ = self.synced.subscribe().wait_for(|synced| *synced).await;
    }

    /// The resource version of the last list or watch event the reflector processed ("" before
    /// the informer runs): what the reflector has written into the fifo, which the cache may not
    /// reflect yet (see [`last_store_sync_resource_version`](Self::last_store_sync_resource_version)).
    pub fn last_sync_resource_version(&self) -> String {
        self.reflector
            .get()
            .map(|reflector| reflector.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// The resource version whose state the cache reflects ("" before the first list has been
    /// processed): that of the newest relist, object change or watch bookmark the informer has
    /// applied (client-go's `LastStoreSyncResourceVersion`). A controller whose own last write
    /// is newer than this reads a cache that has not seen that write yet.
    ///
    /// With an in-order fifo ([`FifoKind::InOrder`]) it follows every change as it is applied.
    /// A delta fifo hands out changes merged by key, so the cache holds a state of one resource
    /// version only at certain points: it moves when the keys queued before a relist or a
    /// bookmark have been processed, and when the fifo runs dry; in between, the cache may hold
    /// newer objects, never older ones.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.cache_version
            .get()
            .map(|version| version())
            .unwrap_or_default()
    }

    /// Which fifo the informer runs on.
    pub fn fifo_kind(&self) -> FifoKind {
        self.fifo_kind
    }

    /// The most items the informer pops from its fifo at once
    /// ([`InformerBuilder::pop_batch`]).
    pub fn pop_batch(&self) -> usize {
        self.pop_batch
    }

    /// Whether [`run`](Self::run) was called.
    pub fn has_started(&self) -> bool {
        self.processor.phase() != Phase::NotStarted
    }

    /// Whether `run` has returned or is shutting down; a stopped informer takes no new handlers.
    pub fn is_stopped(&self) -> bool {
        self.processor.phase() == Phase::Stopped
    }

    /// How many objects the cache holds (for metrics).
    pub fn cache_size(&self) -> usize {
        self.cache.len()
    }

    /// How many list requests (pages included; a streaming list counts as a watch) the
    /// informer's reflector has made (for metrics).
    pub fn list_count(&self) -> u64 {
        self.requests.lists.load(Ordering::Relaxed)
    }

    /// How many watch requests the informer's reflector has made (for metrics).
    pub fn watch_count(&self) -> u64 {
        self.requests.watches.load(Ordering::Relaxed)
    }

    /// How many notifications each handler has waiting (for metrics).
    pub fn listener_buffers(&self) -> Vec<ListenerBuffer> {
        self.processor.buffer_lengths()
    }

    /// Runs the informer until `shutdown` fires: lists and watches, keeps the cache in step and
    /// notifies handlers; on shutdown stops the reflector, drops undelivered notifications and
    /// waits for handler calls in flight. One-shot: a second call returns at once.
    pub async fn run(&self, shutdown: CancellationToken) {
        let span = tracing::debug_span!("informer", informer = %self.name);
        self.run_in_span(shutdown).instrument(span).await;
    }

    async fn run_in_span(&self, shutdown: CancellationToken) {
        let Some(check_period) = self.processor.start() else {
            tracing::warn!(informer = %self.name, "run called on an informer that already ran; ignoring");
            return;
        };
        let transform = self.transform.lock().clone();
        match self.fifo_kind {
            FifoKind::Deltas => {
                let fifo = delta_fifo(&self.cache, transform);
                self.run_on(fifo, check_period, shutdown).await;
            }
            FifoKind::InOrder => {
                let fifo = in_order_fifo(transform);
                self.run_on(fifo, check_period, shutdown).await;
            }
        }
    }

    /// Runs the reflector into `fifo` and the pop loop out of it, until `shutdown`.
    async fn run_on<Q: Queue<K>>(
        &self,
        fifo: Q,
        check_period: Duration,
        shutdown: CancellationToken,
    ) {
        let _ = self.cache_version.set(Box::new({
            let fifo = fifo.clone();
            move || fifo.synced_resource_version()
        }));
        self.bookmarks.connect({
            let fifo = fifo.clone();
            move |resource_version| fifo.bookmark(resource_version)
        });
        let options = self
            .reflector_options
            .lock()
            .take()
            .unwrap_or_default()
            .resync_period(check_period)
            .should_resync({
                // A resync happens only when some handler is due, and then only those handlers
                // receive its sync notifications (client-go's `ShouldResync`).
                let processor = Arc::clone(&self.processor);
                move || processor.should_resync()
            });
        let reflector = Arc::new(Reflector::new(
            Arc::clone(&self.lister_watcher),
            Arc::new(fifo.clone()),
            options,
        ));
        let _ = self.reflector.set(Arc::clone(&reflector));
        // The reflector stops with the informer, also if this future is dropped before shutdown.
        let reflector_shutdown = shutdown.child_token();
        let _stop_reflector = reflector_shutdown.clone().drop_guard();
        let reflector_task =
            tokio::spawn(async move { reflector.run(reflector_shutdown).await }.in_current_span());
        tracing::debug!(informer = %self.name, ?check_period, "informer started");

        let publish_synced = async {
            fifo.synced().await;
            self.synced.send_replace(true);
            tracing::debug!(informer = %self.name, objects = self.cache.len(), "informer synced");
            std::future::pending::<()>().await
        };
        tokio::select! {
            biased;
            () = shutdown.cancelled() => {}
            () = process_loop(&fifo, self.pop_batch, &self.cache, &self.processor, &shutdown) => {}
            () = publish_synced => {}
        }
        fifo.close();
        if let Err(error) = reflector_task.await {
            tracing::error!(informer = %self.name, %error, "reflector task failed");
        }
        self.processor.stop().await;
        tracing::debug!(informer = %self.name, "informer stopped");
    }
}

impl<K: Clone> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.name)
            .field("objects", &self.cache.len())
            .field("synced", &*self.synced.borrow())
            .finish_non_exhaustive()
    }
}

impl<K: Object> CacheSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn wait_synced(&self) -> BoxFuture<'static, ()> {
        let mut synced = self.synced.subscribe();
        Box::pin(async move {
            if synced.wait_for(|synced| *synced).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}
