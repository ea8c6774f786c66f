//! [`Cache`]: read access to the manager's caches, one logical cache per kind
//! ([`KindCache`]), created on first request — by a controller's watch, a field index,
//! [`Manager::informer`](crate::Manager::informer), or a lazy read once the manager runs.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indexer::ObjectKey;
use informer::{InformerFactory, Object, SharedIndexInformer, strip_managed_fields};
use kube::Client;
use kube::api::DynamicObject;
use parking_lot::Mutex;

use crate::dynamic::DynamicKind;
use crate::error::Error;
use crate::kind::{Kind, WatchScope};
use crate::manager::kind_cache::{KindCache, KindUsage};
use crate::manager::lister::CacheLister;
use crate::manager::options::{CacheOptions, Namespaces};
use crate::ops::metrics::InformerSet;
use crate::rbac::{Rule, Verb};

/// What the manager shares with its controllers and caches: the client, the informer factory,
/// the cache options and every kind's cache.
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) factory: InformerFactory,
    pub(crate) options: CacheOptions,
    pub(crate) strip_managed_fields: bool,
    /// How long a lazy read waits for the informer it started.
    pub(crate) lazy_sync_timeout: Duration,
    /// Each kind's cache.
    kinds: Mutex<HashMap<KindKey, KindEntry>>,
    /// Every informer handed out, for the informer metrics.
    pub(crate) informers: InformerSet,
    /// Set when `start` starts the informers: informers created afterwards start at once.
    running: AtomicBool,
}

impl Shared {
    /// The shared state of a manager that has not started.
    pub(crate) fn new(
        client: Client,
        factory: InformerFactory,
        options: CacheOptions,
        strip_managed_fields: bool,
        lazy_sync_timeout: Duration,
        informers: InformerSet,
    ) -> Self {
        Self {
            client,
            factory,
            options,
            strip_managed_fields,
            lazy_sync_timeout,
            kinds: Mutex::new(HashMap::new()),
            informers,
            running: AtomicBool::new(false),
        }
    }

    /// The cache of `K` if something registered it.
    pub(crate) fn registered<K: Kind>(&self) -> Option<Arc<KindCache<K>>> {
        self.registered_as(&KindKey::of::<K>())
    }

    /// The cache registered under `key`, if it holds `K`s.
    pub(super) fn registered_as<K: Object>(&self, key: &KindKey) -> Option<Arc<KindCache<K>>> {
        let kinds = self.kinds.lock();
        let entry = kinds.get(key)?;
        Arc::clone(&entry.typed).downcast::<KindCache<K>>().ok()
    }

    /// The cache of `K`, created on first request with `K`'s options (one informer per cached
    /// namespace), and kept for the manager's lifetime. Created after `start`, its informers
    /// start at once.
    pub(crate) fn kind_cache<K: Kind>(&self) -> Arc<KindCache<K>> {
        let cache = self.controller_kind_cache::<K>();
        cache.pin();
        cache
    }

    /// The cache of `K` for a controller's watch: created like [`kind_cache`](Self::kind_cache)
    /// but not kept once no controller uses it ([`acquire`](Self::acquire) and
    /// [`release`](Self::release) count them).
    pub(crate) fn controller_kind_cache<K: Kind>(&self) -> Arc<KindCache<K>> {
        self.get_or_create(KindKey::of::<K>(), Rule::of::<K>(), || self.create::<K>())
    }

    /// The cache of the dynamic kind `kind`, kept for the manager's lifetime.
    pub(crate) fn dynamic_kind_cache(&self, kind: &DynamicKind) -> Arc<KindCache<DynamicObject>> {
        let cache = self.controller_dynamic_kind_cache(kind);
        cache.pin();
        cache
    }

    /// The cache of the dynamic kind `kind` for a controller's watch (see
    /// [`controller_kind_cache`](Self::controller_kind_cache)).
    pub(crate) fn controller_dynamic_kind_cache(
        &self,
        kind: &DynamicKind,
    ) -> Arc<KindCache<DynamicObject>> {
        let rule = Rule::resource(&kind.resource.group, &kind.resource.plural, kind.namespaced);
        self.get_or_create(KindKey::dynamic(kind), rule, || self.create_dynamic(kind))
    }

    /// The cache registered under `key`, or a new one from `create` (whose informers start at
    /// once if the manager runs). A key always maps to caches of one object type, so the
    /// downcast cannot fail for a key made by [`KindKey`]'s constructors.
    pub(super) fn get_or_create<K: Object>(
        &self,
        key: KindKey,
        resource: Rule,
        create: impl FnOnce() -> KindCache<K>,
    ) -> Arc<KindCache<K>> {
        let created = {
            let mut kinds = self.kinds.lock();
            if let Some(cache) = kinds
                .get(&key)
                .and_then(|entry| Arc::clone(&entry.typed).downcast::<KindCache<K>>().ok())
            {
                return cache;
            }
            let cache = Arc::new(create());
            let entry = KindEntry {
                typed: cache.clone(),
                usage: cache.clone(),
                access: list_and_watch(resource, cache.namespaces()),
            };
            kinds.insert(key, entry);
            cache
        };
        if self.running.load(Ordering::SeqCst) {
            self.factory.start();
        }
        created
    }

    /// One more controller uses the kind `kind`.
    pub(crate) fn acquire(&self, kind: &KindKey) {
        if let Some(entry) = self.kinds.lock().get(kind) {
            entry.usage.acquire();
        }
    }

    /// One controller less uses the kind `kind`; when no one uses it any more, its informers
    /// stop and the kind is forgotten (a later request starts new ones).
    pub(crate) fn release(&self, kind: &KindKey) {
        let unused = {
            let mut kinds = self.kinds.lock();
            let last = kinds.get(kind).is_some_and(|entry| entry.usage.release());
            if last { kinds.remove(kind) } else { None }
        };
        if let Some(entry) = unused {
            entry.usage.stop(&self.factory, &self.informers);
        }
    }

    /// Builds `K`'s cache from the options.
    fn create<K: Kind>(&self) -> KindCache<K> {
        let options = self
            .options
            .resolve::<K>(<K::Scope as WatchScope>::NAMESPACED);
        let informers = <K::Scope as WatchScope>::informers::<K>(
            &self.factory,
            &options.namespaces,
            options.selectors,
        );
        if let Some(transform) = options.transform {
            let strip = self.strip_managed_fields;
            for informer in &informers {
                let transform = transform.clone();
                let set = informer.set_transform(move |obj| {
                    let obj = if strip {
                        strip_managed_fields(obj)?
                    } else {
                        obj
                    };
                    transform(obj)
                });
                if let Err(error) = set {
                    tracing::warn!(%error, kind = type_name::<K>(), "could not set the cache transform");
                }
            }
        }
        for informer in &informers {
            self.informers.insert(informer.clone());
        }
        let kind = format!("{} ({})", K::kind(&()), K::api_version(&()));
        KindCache::new(kind, options.namespaces, informers)
    }

    /// Builds a dynamic kind's cache: one informer across all namespaces (or cluster-wide), or
    /// one per default namespace for a namespaced kind.
    fn create_dynamic(&self, kind: &DynamicKind) -> KindCache<DynamicObject> {
        let namespaces = if kind.namespaced {
            self.options.default_namespaces.clone()
        } else {
            Namespaces::All
        };
        let informers =
            namespaces.each(|namespace| self.factory.dynamic_informer(&kind.resource, namespace));
        for informer in &informers {
            self.informers.insert(informer.clone());
        }
        KindCache::new(kind.describe(), namespaces, informers)
    }

    /// The first informer of `K`'s cache (the only one unless `K` is cached per namespace).
    pub(crate) fn informer<K: Kind>(&self) -> Arc<SharedIndexInformer<K>> {
        let cache = self.kind_cache::<K>();
        // A kind cache always has at least one informer (a namespace set is never empty).
        Arc::clone(&cache.informers()[0])
    }

    /// Marks the caches as running: informers created from now on start at once. Called by
    /// `start` just before it starts the factory.
    pub(crate) fn set_running(&self) {
        self.running.store(true, Ordering::SeqCst);
    }

    /// Whether `start` has started the informers.
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// The RBAC rules of every cached kind's informers: list and watch, in each cached
    /// namespace.
    pub(crate) fn access_rules(&self) -> Vec<Rule> {
        self.kinds
            .lock()
            .values()
            .flat_map(|entry| entry.access.iter().cloned())
            .collect()
    }

    /// How many kinds are cached.
    pub(crate) fn kind_count(&self) -> usize {
        self.kinds.lock().len()
    }
}

/// What identifies a kind's cache: the Rust type of a typed kind, or the resource of a
/// dynamic one (all dynamic kinds share the `DynamicObject` type).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum KindKey {
    /// A [`Kind`].
    Typed(TypeId),
    /// A [`DynamicKind`]: `group/version/plural`.
    Dynamic(String),
    /// The metadata-only cache of the typed kind (the `TypeId` of `K`, its objects cached as
    /// `PartialObjectMeta<K>`).
    Metadata(TypeId),
}

impl KindKey {
    /// The key of the typed kind `K`.
    pub(crate) fn of<K: Kind>() -> Self {
        Self::Typed(TypeId::of::<K>())
    }

    /// The key of the metadata-only cache of the typed kind `K`.
    pub(crate) fn metadata<K: Kind>() -> Self {
        Self::Metadata(TypeId::of::<K>())
    }

    /// The key of a dynamic kind.
    pub(crate) fn dynamic(kind: &DynamicKind) -> Self {
        let resource = &kind.resource;
        Self::Dynamic(format!(
            "{}/{}/{}",
            resource.group, resource.version, resource.plural
        ))
    }
}

/// One kind's cache, typed (`Arc<KindCache<K>>`) and as its usage, with the RBAC rules its
/// informers need.
struct KindEntry {
    typed: Arc<dyn Any + Send + Sync>,
    usage: Arc<dyn KindUsage>,
    access: Vec<Rule>,
}

/// List and watch of `resource`: one rule, or one per cached namespace (for a Role in each).
fn list_and_watch(resource: Rule, namespaces: Option<Vec<String>>) -> Vec<Rule> {
    let rule = resource.verbs([Verb::List, Verb::Watch]);
    match namespaces {
        Some(namespaces) if rule.is_namespaced() => namespaces
            .into_iter()
            .map(|namespace| rule.clone().in_namespace(namespace))
            .collect(),
        _ => vec![rule],
    }
}

/// Reads objects from the manager's caches (never from the API server). Cheap to clone.
///
/// [`lister`](Self::lister) and [`get`](Self::get) read kinds the manager already caches: the
/// primary, owned and watched kinds of its controllers, kinds with a
/// [field index](crate::Manager::index_field), and any kind requested with
/// [`Manager::informer`](crate::Manager::informer). [`lazy_lister`](Self::lazy_lister) reads any
/// kind, starting its informer on first use once the manager runs (controller-runtime's lazy
/// cache).
#[derive(Clone)]
pub struct Cache {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field(
                "default_namespaces",
                &self.shared.options.default_namespaces,
            )
            .field("kinds", &self.shared.kind_count())
            .finish()
    }
}

impl Cache {
    /// The lister of `K`'s cache: namespace, label-selector and field-index reads across every
    /// namespace the manager caches `K` in. [`Error::NotCached`] if nothing registered `K`.
    pub fn lister<K: Kind>(&self) -> Result<CacheLister<K>, Error> {
        self.shared
            .registered::<K>()
            .map(CacheLister::new)
            .ok_or_else(|| Error::NotCached(type_name::<K>().to_owned()))
    }

    /// The cached object of `K` with `key`, if any; [`Error::NamespaceNotCached`] if the
    /// manager does not cache `key`'s namespace.
    pub fn get<K: Kind>(&self, key: &ObjectKey) -> Result<Option<Arc<K>>, Error> {
        self.lister::<K>()?.get_by_key(key)
    }

    /// The lister of the dynamic kind `kind`'s cache; [`Error::NotCached`] if nothing
    /// registered it (a controller's watch, or [`Manager::dynamic_informers`](crate::Manager::dynamic_informers)).
    pub fn dynamic_lister(&self, kind: &DynamicKind) -> Result<CacheLister<DynamicObject>, Error> {
        self.shared
            .registered_as(&KindKey::dynamic(kind))
            .map(CacheLister::new)
            .ok_or_else(|| Error::NotCached(kind.describe()))
    }

    /// The lister of `K`'s cache, starting `K`'s informers if nothing registered `K` yet and
    /// waiting until they synced (at most the manager's cache-sync timeout:
    /// [`Error::LazySyncTimeout`] names the kind). Only once the manager runs
    /// ([`Error::CacheNotStarted`] before). A kind started this way stays cached until the
    /// manager stops.
    pub async fn lazy_lister<K: Kind>(&self) -> Result<CacheLister<K>, Error> {
        let kind = || format!("{} ({})", K::kind(&()), K::api_version(&()));
        if !self.shared.is_running() {
            return Err(Error::CacheNotStarted(kind()));
        }
        let cache = self.shared.kind_cache::<K>();
        let timeout = self.shared.lazy_sync_timeout;
        if tokio::time::timeout(timeout, cache.synced()).await.is_err() {
            return Err(Error::LazySyncTimeout {
                kind: kind(),
                timeout,
            });
        }
        Ok(CacheLister::new(cache))
    }
}
