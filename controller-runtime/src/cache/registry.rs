//! [`Registry`]: every kind's cache of one manager, each created on first request — by a
//! controller's watch, a field index, a request for its informers, or a lazy read once the
//! manager runs — from the kind's [`CacheSpec`] and the manager's [`CacheOptions`], and stopped
//! again when the last controller that watched it goes.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indexer::compact::{Codec, RecentlyDecoded};
use informer::{InformerFactory, Object};
use kube::Client;
use parking_lot::Mutex;

use crate::cache::error::Error;
use crate::cache::kind::{CacheSpec, KindId, KindKey};
use crate::cache::kind_cache::{KindCache, KindUsage};
use crate::cache::options::CacheOptions;
use crate::cache::storage::{CompactInformer, Informers};
use crate::cache::transform::compose;
use crate::ops::metrics::InformerSet;
use crate::rbac::{Rule, Verb};

/// The caches of one manager, and what they are made from: the client, the informer factory
/// and the cache settings.
pub(crate) struct Registry {
    pub(crate) client: Client,
    pub(crate) factory: InformerFactory,
    pub(crate) options: CacheOptions,
    /// Whether cached objects lose their `metadata.managedFields`.
    strip_managed_fields: bool,
    /// How long a lazy read waits for the informers it started.
    pub(crate) lazy_sync_timeout: Duration,
    /// Each kind's cache.
    kinds: Mutex<HashMap<KindKey, KindEntry>>,
    /// Every informer handed out, for the informer metrics.
    pub(crate) informers: InformerSet,
    /// Set when `start` starts the informers: informers created afterwards start at once.
    running: AtomicBool,
    /// In a sharded manager: the shard's label requirement, and the kinds whose caches hold
    /// only the shard's objects.
    sharding: Option<(String, Mutex<HashSet<KindId>>)>,
}

impl Registry {
    /// The caches of a manager that has not started.
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
            sharding: None,
        }
    }

    /// The caches of a sharded manager: the caches of the kinds marked with
    /// [`shard_kind`](Self::shard_kind) select `requirement` (the shard's label).
    pub(crate) fn sharded(mut self, requirement: String) -> Self {
        self.sharding = Some((requirement, Mutex::new(HashSet::new())));
        self
    }

    /// Caches of `kind` made from now on hold only the shard's objects; `false` if the manager
    /// is not sharded or a cache of the kind already holds all its objects (it stays so: its
    /// readers would lose objects otherwise).
    pub(crate) fn shard_kind(&self, kind: &KindId) -> bool {
        let Some((_, kinds)) = &self.sharding else {
            return false;
        };
        if !kinds.lock().insert(kind.clone()) {
            return true;
        }
        let cached_whole = self.kinds.lock().keys().any(|key| &key.kind == kind);
        !cached_whole
    }

    /// The shard's label requirement for caches of `kind`, if they are sharded.
    fn shard_requirement(&self, kind: &KindId) -> Option<&str> {
        let (requirement, kinds) = self.sharding.as_ref()?;
        kinds.lock().contains(kind).then_some(requirement.as_str())
    }

    /// The cache registered under `key`, if something registered it.
    pub(crate) fn registered<T: Object>(&self, key: &KindKey) -> Option<Arc<KindCache<T>>> {
        let kinds = self.kinds.lock();
        let entry = kinds.get(key)?;
        Arc::clone(&entry.typed).downcast::<KindCache<T>>().ok()
    }

    /// The cache `spec` describes, created on first request and kept for the manager's
    /// lifetime. Created after `start`, its informers start at once.
    pub(crate) fn kind_cache<T: Object>(
        &self,
        spec: &CacheSpec<T>,
    ) -> Result<Arc<KindCache<T>>, Error> {
        let cache = self.controller_kind_cache(spec)?;
        cache.pin();
        Ok(cache)
    }

    /// The cache `spec` describes, for a controller's watch: created like
    /// [`kind_cache`](Self::kind_cache) but not kept once no controller uses it
    /// ([`acquire`](Self::acquire) and [`release`](Self::release) count them).
    pub(crate) fn controller_kind_cache<T: Object>(
        &self,
        spec: &CacheSpec<T>,
    ) -> Result<Arc<KindCache<T>>, Error> {
        let created = {
            let mut kinds = self.kinds.lock();
            if let Some(cache) = kinds
                .get(&spec.key)
                .and_then(|entry| Arc::clone(&entry.typed).downcast::<KindCache<T>>().ok())
            {
                return match &spec.storage {
                    Some(asked)
                        if spec.compact.is_some() && asked.is_compact() != cache.is_compact() =>
                    {
                        Err(Error::InvalidSettings {
                            kind: spec.kind.clone(),
                            reason: format!(
                                "a watch asks for {} storage, and the kind is cached {} already (by another watch, a field index or a read); give every watch of the kind one storage, or set it with `ByObject::storage`",
                                asked.name(),
                                if cache.is_compact() {
                                    "compact"
                                } else {
                                    "typed"
                                }
                            ),
                        })
                    }
                    _ => Ok(cache),
                };
            }
            let cache = Arc::new(self.create(spec)?);
            let entry = KindEntry {
                typed: cache.clone(),
                usage: cache.clone(),
                access: list_and_watch(spec.resource.clone(), cache.namespaces()),
            };
            kinds.insert(spec.key.clone(), entry);
            cache
        };
        if self.running.load(Ordering::SeqCst) {
            self.factory.start();
        }
        Ok(created)
    }

    /// Builds the cache `spec` describes, with its resolved settings: one informer per cached
    /// namespace (or one), each with the cache's one transform.
    fn create<T: Object>(&self, spec: &CacheSpec<T>) -> Result<KindCache<T>, Error> {
        let mut settings = self.options.resolve(spec)?;
        if let Some(requirement) = self.shard_requirement(&spec.key.kind) {
            settings.selectors = settings.selectors.and_labels(requirement);
        }
        let informers = match (settings.storage.compact_settings(), &spec.compact) {
            (Some(compact), Some(make)) => {
                let informers = settings
                    .namespaces
                    .each(|namespace| make(&self.factory, namespace, settings.selectors.clone()));
                // One codec for all the kind's informers: they share its dictionary.
                let keep = compact.codec.keeps_managed_fields() || !self.strip_managed_fields;
                let codec = Codec::new(compact.codec.clone().keep_managed_fields(keep));
                for informer in &informers {
                    informer.set_transform(codec.transform())?;
                    self.informers.insert(informer.clone());
                }
                let recent = (compact.recently_decoded > 0)
                    .then(|| Arc::new(RecentlyDecoded::new(compact.recently_decoded)));
                Informers::Compact(CompactInformer::all(informers, recent))
            }
            _ => {
                let informers = settings.namespaces.each(|namespace| {
                    (spec.informer)(&self.factory, namespace, settings.selectors.clone())
                });
                let transform = compose(
                    self.strip_managed_fields,
                    spec.lean.clone(),
                    settings.transform,
                );
                for informer in &informers {
                    if let Some(transform) = transform.clone() {
                        // The factory hands each informer to this cache alone, before it starts.
                        informer.set_transform(move |obj| transform(obj))?;
                    }
                    self.informers.insert(informer.clone());
                }
                Informers::Typed(informers)
            }
        };
        Ok(KindCache::new(
            spec.kind.clone(),
            settings.namespaces,
            informers,
        ))
    }

    /// One more controller uses the cache `kind`.
    pub(crate) fn acquire(&self, kind: &KindKey) {
        if let Some(entry) = self.kinds.lock().get(kind) {
            entry.usage.acquire();
        }
    }

    /// One controller less uses the cache `kind`; when no one uses it any more, its informers
    /// stop and the cache is forgotten (a later request starts new ones).
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

    /// Marks the caches as running: informers created from now on start at once. Called by
    /// `start` just before it starts the factory.
    pub(crate) fn set_running(&self) {
        self.running.store(true, Ordering::SeqCst);
    }

    /// Whether `start` has started the informers.
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// The RBAC rules of every cache's informers: list and watch, in each cached namespace.
    pub(crate) fn access_rules(&self) -> Vec<Rule> {
        self.kinds
            .lock()
            .values()
            .flat_map(|entry| entry.access.iter().cloned())
            .collect()
    }

    /// How many caches there are.
    pub(crate) fn kind_count(&self) -> usize {
        self.kinds.lock().len()
    }

    /// The namespaces namespaced kinds are cached in unless their settings say otherwise.
    pub(crate) fn default_namespaces(&self) -> Option<Vec<String>> {
        self.options.default_namespaces.to_list()
    }
}

/// One cache, typed (`Arc<KindCache<T>>`) and as its usage, with the RBAC rules its informers
/// need.
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
