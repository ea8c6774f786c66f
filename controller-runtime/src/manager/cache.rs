//! [`Cache`]: read access to the manager's shared informer caches.

use std::any::{TypeId, type_name};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexer::{Lister, ObjectKey};
use informer::{InformerFactory, Selectors, SharedIndexInformer};
use kube::Client;
use parking_lot::Mutex;

use crate::error::Error;
use crate::kind::{Kind, WatchScope};
use crate::ops::metrics::InformerSet;

/// What the manager shares with its controllers and caches: the client, the informer factory
/// and the scoping rules.
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) factory: InformerFactory,
    pub(crate) namespace: Option<String>,
    pub(crate) selectors: HashMap<TypeId, Selectors>,
    /// Types with an informer requested through the manager.
    pub(crate) cached: Mutex<HashSet<TypeId>>,
    /// Every informer handed out, for the informer metrics.
    pub(crate) informers: InformerSet,
}

impl Shared {
    /// The manager's informer for `K` (scoped by the manager's namespace and `K`'s selectors),
    /// created on first request; it runs from the next `start`.
    pub(crate) fn informer<K: Kind>(&self) -> Arc<SharedIndexInformer<K>> {
        self.cached.lock().insert(TypeId::of::<K>());
        let selectors = self.selectors.get(&TypeId::of::<K>()).cloned();
        let informer = <K::Scope as WatchScope>::informer::<K>(
            &self.factory,
            self.namespace.as_deref(),
            selectors,
        );
        self.informers.insert(informer.clone());
        informer
    }
}

/// Reads objects from the manager's informer caches (never from the API server). Cheap to
/// clone. Only types the manager watches can be read: the primary, owned and watched types of
/// its controllers, and any type requested with [`Manager::informer`](crate::Manager::informer)
/// before `start`.
#[derive(Clone)]
pub struct Cache {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("namespace", &self.shared.namespace)
            .field("types", &self.shared.cached.lock().len())
            .finish()
    }
}

impl Cache {
    /// The lister of `K`'s cache (namespace and label-selector reads).
    pub fn lister<K: Kind>(&self) -> Result<Lister<K>, Error> {
        if !self.shared.cached.lock().contains(&TypeId::of::<K>()) {
            return Err(Error::NotCached(type_name::<K>().to_owned()));
        }
        Ok(self.shared.informer::<K>().lister())
    }

    /// The cached object of `K` with `key`, if any.
    pub fn get<K: Kind>(&self, key: &ObjectKey) -> Result<Option<Arc<K>>, Error> {
        Ok(self.lister::<K>()?.indexer().get_by_key(key))
    }
}
