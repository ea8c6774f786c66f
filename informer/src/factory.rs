//! [`InformerFactory`]: one shared informer per resource and scope, started and stopped together
//! (client-go's `SharedInformerFactory`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use kube::api::{ApiResource, DynamicObject};
use kube::{Api, Client, Resource};
use parking_lot::Mutex;
use reflector::{ApiListerWatcher, ReflectorOptions};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fifo::{FifoKind, POP_BATCH};
use crate::scope::{InformerScope, Scoped, Selectors};
use crate::wait::CacheSynced;
use crate::{Error, Object, SharedIndexInformer, TransformFn, strip_managed_fields};

mod compact;

type OptionsFn = Arc<dyn Fn() -> ReflectorOptions + Send + Sync>;

/// Hands out one [`SharedIndexInformer`] per (object type, resource, namespace, selectors), so
/// every controller asking for Pods shares one cache and one watch; starts them, waits for their
/// caches and shuts them down together. Metadata informers
/// ([`metadata_informer`](Self::metadata_informer), [`metadata_informer_in`](Self::metadata_informer_in)
/// and [`dynamic_metadata_informer`](Self::dynamic_metadata_informer)) are shared the same way,
/// apart from the full informers of the same kind. Where and what an informer watches is an
/// [`InformerScope`]: a namespace or all, and selectors or the factory's.
///
/// Informers come with the namespace index; add more with
/// [`SharedIndexInformer::add_indexers`]. An informer requested after [`start`](Self::start)
/// runs from the next `start`. `InformerFactory` is a handle: clones share the informers.
#[derive(Clone)]
pub struct InformerFactory {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) client: Client,
    default_resync: Duration,
    resync_overrides: HashMap<String, Duration>,
    pub(crate) selectors: Selectors,
    strip_managed_fields: bool,
    reflector_options: OptionsFn,
    fifo: FifoKind,
    pop_batch: usize,
    shutdown: CancellationToken,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    informers: HashMap<InformerKey, Entry>,
    tasks: Vec<JoinHandle<()>>,
    shutting_down: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct InformerKey {
    object_type: TypeId,
    url: String,
    selectors: Selectors,
}

struct Entry {
    typed: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn Runnable>,
    started: bool,
    /// Stops this informer alone ([`InformerFactory::remove`]); a child of the factory's token.
    stop: CancellationToken,
}

/// What the factory needs of an informer of any type.
trait Runnable: CacheSynced {
    fn name(&self) -> &str;
    fn run(self: Arc<Self>, shutdown: CancellationToken) -> BoxFuture<'static, ()>;
}

impl<K: Object> Runnable for SharedIndexInformer<K> {
    fn name(&self) -> &str {
        SharedIndexInformer::name(self)
    }

    fn run(self: Arc<Self>, shutdown: CancellationToken) -> BoxFuture<'static, ()> {
        Box::pin(async move { SharedIndexInformer::run(&self, shutdown).await })
    }
}

/// Configures an [`InformerFactory`]; from [`InformerFactory::builder`].
pub struct InformerFactoryBuilder {
    client: Client,
    default_resync: Duration,
    resync_overrides: HashMap<String, Duration>,
    selectors: Selectors,
    strip_managed_fields: bool,
    reflector_options: OptionsFn,
    fifo: FifoKind,
    pop_batch: usize,
}

/// The name a resync override is looked up by: `apiVersion/kind`.
fn resource_id<K: Resource>(dyntype: &K::DynamicType) -> String {
    format!("{}/{}", K::api_version(dyntype), K::kind(dyntype))
}

impl InformerFactoryBuilder {
    /// The resync period of every informer without an override (default: never).
    pub fn default_resync(mut self, period: Duration) -> Self {
        self.default_resync = period;
        self
    }

    /// The resync period of informers of `K`.
    pub fn resync_for<K: Resource<DynamicType = ()>>(mut self, period: Duration) -> Self {
        self.resync_overrides.insert(resource_id::<K>(&()), period);
        self
    }

    /// The resync period of dynamic informers of `resource`.
    pub fn resync_for_resource(mut self, resource: &ApiResource, period: Duration) -> Self {
        self.resync_overrides
            .insert(resource_id::<DynamicObject>(resource), period);
        self
    }

    /// The selectors of every informer that does not ask for its own (client-go's
    /// `WithTweakListOptions`); default: none.
    pub fn selectors(mut self, selectors: Selectors) -> Self {
        self.selectors = selectors;
        self
    }

    /// Whether every informer drops `metadata.managedFields` before caching (default: no); see
    /// [`strip_managed_fields`](crate::strip_managed_fields).
    pub fn strip_managed_fields(mut self, strip: bool) -> Self {
        self.strip_managed_fields = strip;
        self
    }

    /// Reflector options for every informer (called once per informer).
    pub fn reflector_options(
        mut self,
        options: impl Fn() -> ReflectorOptions + Send + Sync + 'static,
    ) -> Self {
        self.reflector_options = Arc::new(options);
        self
    }

    /// Which fifo every informer runs on (default: [`FifoKind::Deltas`]).
    pub fn fifo(mut self, kind: FifoKind) -> Self {
        self.fifo = kind;
        self
    }

    /// The most items every informer pops from its fifo at once, written to its cache under one
    /// lock and handed to each handler together (default: 1 000, client-go's; at least 1); see
    /// [`InformerBuilder::pop_batch`](crate::InformerBuilder::pop_batch).
    pub fn pop_batch(mut self, max_items: usize) -> Self {
        self.pop_batch = max_items.max(1);
        self
    }

    /// The factory.
    pub fn build(self) -> InformerFactory {
        InformerFactory {
            inner: Arc::new(Inner {
                client: self.client,
                default_resync: self.default_resync,
                resync_overrides: self.resync_overrides,
                selectors: self.selectors,
                strip_managed_fields: self.strip_managed_fields,
                reflector_options: self.reflector_options,
                fifo: self.fifo,
                pop_batch: self.pop_batch,
                shutdown: CancellationToken::new(),
                state: Mutex::new(State::default()),
            }),
        }
    }
}

impl InformerFactory {
    /// A factory over `client` with default settings (no resync, no selectors).
    pub fn new(client: Client) -> Self {
        Self::builder(client).build()
    }

    /// Starts configuring a factory over `client`.
    pub fn builder(client: Client) -> InformerFactoryBuilder {
        InformerFactoryBuilder {
            client,
            default_resync: Duration::ZERO,
            resync_overrides: HashMap::new(),
            selectors: Selectors::default(),
            strip_managed_fields: false,
            reflector_options: Arc::new(ReflectorOptions::default),
            fifo: FifoKind::default(),
            pop_batch: POP_BATCH,
        }
    }

    /// The shared informer of `K` across all namespaces (or cluster-wide), with the factory's
    /// selectors.
    pub fn informer<K>(&self) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: Scoped,
    {
        self.informer_in::<K>(InformerScope::all())
    }

    /// The shared informer of `K` in `scope`: a namespace (ignored for a cluster-scoped kind)
    /// and selectors (the factory's unless the scope names its own).
    pub fn informer_in<K>(&self, scope: InformerScope) -> Arc<SharedIndexInformer<K>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: Scoped,
    {
        let api = K::Scope::confine(Api::all(self.inner.client.clone()), scope.namespace_name());
        let selectors = self.selectors_of(&scope);
        self.shared(api, &(), selectors, ApiListerWatcher::new, None)
    }

    /// The shared informer of a resource known only at run time (a custom resource found by
    /// discovery, say), in `scope`.
    pub fn dynamic_informer(
        &self,
        resource: &ApiResource,
        scope: InformerScope,
    ) -> Arc<SharedIndexInformer<DynamicObject>> {
        let mut api = Api::all_with(self.inner.client.clone(), resource);
        if let Some(namespace) = scope.namespace_name() {
            api = api.constrain(namespace);
        }
        let selectors = self.selectors_of(&scope);
        let dynamic = |api| ApiListerWatcher::dynamic(api, resource);
        self.shared(api, resource, selectors, dynamic, None)
    }

    /// The selectors an informer of `scope` lists and watches with.
    pub(crate) fn selectors_of(&self, scope: &InformerScope) -> Selectors {
        scope
            .own_selectors()
            .cloned()
            .unwrap_or_else(|| self.inner.selectors.clone())
    }

    /// The informer for `api` and `selectors`: the existing one, or a new one (whose transform
    /// is `transform`, after the managed-fields stripping when the factory strips them).
    pub(crate) fn shared<K: Object>(
        &self,
        api: Api<K>,
        dyntype: &K::DynamicType,
        selectors: Selectors,
        lister_watcher: impl FnOnce(Api<K>) -> ApiListerWatcher<K>,
        transform: Option<TransformFn<K>>,
    ) -> Arc<SharedIndexInformer<K>> {
        let inner = &self.inner;
        let key = InformerKey {
            object_type: TypeId::of::<K>(),
            url: api.resource_url().to_owned(),
            selectors,
        };
        let mut state = inner.state.lock();
        if let Some(entry) = state.informers.get(&key)
            && let Ok(informer) = Arc::clone(&entry.typed).downcast::<SharedIndexInformer<K>>()
        {
            return informer;
        }
        let name = describe::<K>(dyntype, api.namespace(), &key.selectors);
        let mut source = lister_watcher(api);
        if let Some(labels) = &key.selectors.labels {
            source = source.labels(labels);
        }
        if let Some(fields) = &key.selectors.fields {
            source = source.fields(fields);
        }
        let resync = inner
            .resync_overrides
            .get(&resource_id::<K>(dyntype))
            .copied()
            .unwrap_or(inner.default_resync);
        let informer = Arc::new(
            SharedIndexInformer::builder(Arc::new(source))
                .resync_period(resync)
                .reflector_options((inner.reflector_options)())
                .name(name)
                .fifo(inner.fifo)
                .pop_batch(inner.pop_batch)
                .build(),
        );
        let transform: Option<TransformFn<K>> = match (inner.strip_managed_fields, transform) {
            (false, transform) => transform,
            (true, None) => Some(Arc::new(strip_managed_fields)),
            (true, Some(then)) => Some(Arc::new(move |obj| then(strip_managed_fields(obj)?))),
        };
        if let Some(transform) = transform {
            // A new informer has not started, so this cannot fail.
            if let Err(error) = informer.set_transform(move |obj| transform(obj)) {
                tracing::warn!(%error, "could not set the factory's transform");
            }
        }
        state.informers.insert(
            key,
            Entry {
                typed: informer.clone(),
                erased: informer.clone(),
                started: false,
                stop: inner.shutdown.child_token(),
            },
        );
        informer
    }

    /// Starts every informer requested so far that is not running yet (without waiting for
    /// anything). Does nothing after [`shutdown`](Self::shutdown).
    pub fn start(&self) {
        let inner = &self.inner;
        let mut state = inner.state.lock();
        if state.shutting_down {
            return;
        }
        let mut started = Vec::new();
        for entry in state.informers.values_mut().filter(|entry| !entry.started) {
            entry.started = true;
            let informer = Arc::clone(&entry.erased);
            started.push(tokio::spawn(informer.run(entry.stop.clone())));
        }
        state.tasks.extend(started);
    }

    /// Starts `informer` alone, if the factory holds it and it is not running yet (without
    /// waiting for anything); whether this call started it. Does nothing after
    /// [`shutdown`](Self::shutdown). For starting some kinds ahead of the others: a controller
    /// that fills its caches before its manager leads, while the rest wait for leadership.
    pub fn start_informer<K: Object>(&self, informer: &Arc<SharedIndexInformer<K>>) -> bool {
        let mut state = self.inner.state.lock();
        if state.shutting_down {
            return false;
        }
        let address = Arc::as_ptr(informer) as *const ();
        let Some(entry) = state
            .informers
            .values_mut()
            .find(|entry| !entry.started && Arc::as_ptr(&entry.erased) as *const () == address)
        else {
            return false;
        };
        entry.started = true;
        let task = tokio::spawn(Arc::clone(&entry.erased).run(entry.stop.clone()));
        state.tasks.push(task);
        true
    }

    /// Stops `informer` (if it runs) and forgets it: a later request for the same resource and
    /// scope gets a new informer. For an informer no one uses any more, say the watch of a
    /// kind whose controllers were removed. Returns whether the factory held it.
    pub fn remove<K: Object>(&self, informer: &Arc<SharedIndexInformer<K>>) -> bool {
        let removed = {
            let mut state = self.inner.state.lock();
            let key = state.informers.iter().find_map(|(key, entry)| {
                let typed = Arc::clone(&entry.typed).downcast::<SharedIndexInformer<K>>();
                typed
                    .is_ok_and(|typed| Arc::ptr_eq(&typed, informer))
                    .then(|| key.clone())
            });
            key.and_then(|key| state.informers.remove(&key))
        };
        match removed {
            Some(entry) => {
                entry.stop.cancel();
                true
            }
            None => false,
        }
    }

    /// Waits until every started informer has synced, for at most `timeout`; on timeout, the
    /// error names the informers that had not.
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> Result<(), Error> {
        let started: Vec<Arc<dyn Runnable>> = {
            let state = self.inner.state.lock();
            state
                .informers
                .values()
                .filter(|entry| entry.started)
                .map(|entry| Arc::clone(&entry.erased))
                .collect()
        };
        let waits = started.iter().map(|informer| informer.wait_synced());
        if tokio::time::timeout(timeout, join_all(waits)).await.is_ok() {
            return Ok(());
        }
        Err(Error::NotSynced {
            timeout,
            unsynced: self.unsynced(),
        })
    }

    /// The names of the started informers whose caches have not synced yet, sorted: what a
    /// readiness check or a timeout reports.
    pub fn unsynced(&self) -> Vec<String> {
        let state = self.inner.state.lock();
        let mut unsynced: Vec<String> = state
            .informers
            .values()
            .filter(|entry| entry.started && !entry.erased.has_synced())
            .map(|entry| entry.erased.name().to_owned())
            .collect();
        unsynced.sort();
        unsynced
    }

    /// Stops every informer and waits until they have stopped (their handlers' calls in flight
    /// included). Later `start` calls do nothing. Safe to call more than once.
    pub async fn shutdown(&self) {
        let tasks = {
            let mut state = self.inner.state.lock();
            state.shutting_down = true;
            std::mem::take(&mut state.tasks)
        };
        self.inner.shutdown.cancel();
        for task in tasks {
            if let Err(error) = task.await {
                tracing::error!(%error, "informer task failed");
            }
        }
    }

    /// How many informers the factory holds.
    pub fn len(&self) -> usize {
        self.inner.state.lock().informers.len()
    }

    /// Whether the factory holds no informer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An informer's name in logs and sync reports: resource, namespace and selectors.
fn describe<K: Resource>(
    dyntype: &K::DynamicType,
    namespace: Option<&str>,
    selectors: &Selectors,
) -> String {
    let mut name = format!("{} {}", K::api_version(dyntype), K::kind(dyntype));
    if K::metadata_api() {
        name.push_str(" metadata");
    }
    match namespace {
        Some(namespace) => name.push_str(&format!(" in {namespace}")),
        None => name.push_str(" in all namespaces"),
    }
    if let Some(labels) = &selectors.labels {
        name.push_str(&format!(" labels={labels}"));
    }
    if let Some(fields) = &selectors.fields {
        name.push_str(&format!(" fields={fields}"));
    }
    name
}

impl fmt::Debug for InformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("InformerFactory")
            .field("informers", &state.informers.len())
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for InformerFactoryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerFactoryBuilder")
            .field("default_resync", &self.default_resync)
            .field("resync_overrides", &self.resync_overrides)
            .field("selectors", &self.selectors)
            .field("fifo", &self.fifo)
            .field("pop_batch", &self.pop_batch)
            .finish_non_exhaustive()
    }
}
