//! What the manager caches: the default namespaces and selectors of every kind, and per-kind
//! overrides ([`ByObject`]) — controller-runtime's `cache.Options.DefaultNamespaces` and
//! `ByObject`.

use std::any::{Any, TypeId};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use informer::{Object, Selectors, TransformFn};
use kube::core::NamespaceScope;

use crate::kind::Kind;

/// Cache settings of one kind, overriding the manager's defaults: the namespaces it is cached
/// in (namespaced kinds only), its label and field selectors, and a transform applied to each
/// object before it is cached. Give it to [`ManagerBuilder::by_object`](crate::ManagerBuilder::by_object).
///
/// ```
/// # use kube_rt_controller_runtime::ByObject;
/// # use k8s_openapi::api::core::v1::{Node, Pod};
/// // Pods: only in two namespaces, only those labelled app=web, without their annotations.
/// let pods = ByObject::<Pod>::new()
///     .namespaces(["shop", "billing"])
///     .labels("app=web")
///     .transform(|pod| {
///         let mut pod = std::sync::Arc::unwrap_or_clone(pod);
///         pod.metadata.annotations = None;
///         Ok(std::sync::Arc::new(pod))
///     });
/// // Nodes (cluster-scoped): selectors and transforms apply, namespaces do not exist.
/// let nodes = ByObject::<Node>::new().labels("node-role.kubernetes.io/worker");
/// # let _ = (pods, nodes);
/// ```
pub struct ByObject<K> {
    namespaces: Option<BTreeSet<String>>,
    selectors: Option<Selectors>,
    transform: Option<TransformFn<K>>,
}

impl<K> Default for ByObject<K> {
    fn default() -> Self {
        Self {
            namespaces: None,
            selectors: None,
            transform: None,
        }
    }
}

impl<K> std::fmt::Debug for ByObject<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByObject")
            .field("namespaces", &self.namespaces)
            .field("selectors", &self.selectors)
            .field("transform", &self.transform.is_some())
            .finish()
    }
}

impl<K: Kind> ByObject<K> {
    /// The manager's defaults, to be overridden.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only objects whose labels match `selector` (e.g. `app=web,tier!=db`) are cached.
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.selectors = Some(self.selectors.unwrap_or_default().labels(selector));
        self
    }

    /// Only objects whose fields match `selector` (e.g. `spec.nodeName=node-a`) are cached.
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.selectors = Some(self.selectors.unwrap_or_default().fields(selector));
        self
    }

    /// Applies `transform` to every object before it is cached and handed to controllers (after
    /// the manager strips managed fields, if it does). It must keep the object's namespace and
    /// name.
    pub fn transform(
        mut self,
        transform: impl Fn(Arc<K>) -> Result<Arc<K>, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }
}

impl<K> ByObject<K>
where
    K: Kind,
    K::Scope: NamespaceScope,
{
    /// Caches this kind in exactly these namespaces (one watch each), instead of the manager's
    /// default namespaces. An empty set means all namespaces.
    pub fn namespaces<I, S>(mut self, namespaces: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.namespaces = Some(namespaces.into_iter().map(Into::into).collect());
        self
    }
}

/// Where a kind is cached: across all namespaces (one watch) or in a set of namespaces (one
/// watch each). Cluster-scoped kinds are always cached cluster-wide.
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub enum Namespaces {
    /// One watch across all namespaces.
    All,
    /// One watch per namespace.
    Only(BTreeSet<String>),
}

impl Namespaces {
    /// One `make(namespace)` per cached namespace, in the set's order, or a single `make(None)`
    /// for all namespaces.
    pub(crate) fn each<T>(&self, mut make: impl FnMut(Option<&str>) -> T) -> Vec<T> {
        match self {
            Self::All => vec![make(None)],
            Self::Only(set) => set.iter().map(|namespace| make(Some(namespace))).collect(),
        }
    }

    /// From a set: empty means all namespaces.
    pub(crate) fn from_set(set: BTreeSet<String>) -> Self {
        if set.is_empty() {
            Self::All
        } else {
            Self::Only(set)
        }
    }
}

/// One kind's resolved settings.
pub(crate) struct KindOptions<K> {
    pub(crate) namespaces: Namespaces,
    pub(crate) selectors: Selectors,
    pub(crate) transform: Option<TransformFn<K>>,
}

/// The manager's cache settings: defaults and per-kind overrides (stored type-erased, by
/// `TypeId`).
pub(crate) struct CacheOptions {
    pub(crate) default_namespaces: Namespaces,
    pub(crate) default_selectors: Selectors,
    by_object: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Default for CacheOptions {
    fn default() -> Self {
        Self {
            default_namespaces: Namespaces::All,
            default_selectors: Selectors::default(),
            by_object: HashMap::new(),
        }
    }
}

impl CacheOptions {
    /// Sets the overrides of `K` (replacing earlier ones).
    pub(crate) fn insert<K: Kind>(&mut self, options: ByObject<K>) {
        self.by_object.insert(TypeId::of::<K>(), Box::new(options));
    }

    /// Sets `K`'s selectors, keeping its other overrides.
    pub(crate) fn set_selectors<K: Kind>(&mut self, selectors: Selectors) {
        let entry = self
            .by_object
            .entry(TypeId::of::<K>())
            .or_insert_with(|| Box::new(ByObject::<K>::default()));
        if let Some(options) = entry.downcast_mut::<ByObject<K>>() {
            options.selectors = Some(selectors);
        }
    }

    /// The resolved settings of `K`.
    pub(crate) fn resolve<K: Object + 'static>(&self, namespaced: bool) -> KindOptions<K> {
        let own = self
            .by_object
            .get(&TypeId::of::<K>())
            .and_then(|options| options.downcast_ref::<ByObject<K>>());
        let namespaces = match (namespaced, own.and_then(|own| own.namespaces.clone())) {
            (false, _) => Namespaces::All,
            (true, Some(set)) => Namespaces::from_set(set),
            (true, None) => self.default_namespaces.clone(),
        };
        let selectors = own
            .and_then(|own| own.selectors.clone())
            .unwrap_or_else(|| self.default_selectors.clone());
        KindOptions {
            namespaces,
            selectors,
            transform: own.and_then(|own| own.transform.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};

    #[test]
    fn per_kind_overrides_win_over_defaults_and_cluster_kinds_ignore_namespaces() {
        let mut options = CacheOptions {
            default_namespaces: Namespaces::from_set(["a".to_owned(), "b".to_owned()].into()),
            default_selectors: Selectors::new().labels("team=x"),
            ..CacheOptions::default()
        };
        options.insert(
            ByObject::<Pod>::new()
                .namespaces(["c"])
                .fields("spec.nodeName=n"),
        );
        options.set_selectors::<ConfigMap>(Selectors::new().labels("app=web"));

        let pods = options.resolve::<Pod>(true);
        assert_eq!(pods.namespaces, Namespaces::Only(["c".to_owned()].into()));
        assert_eq!(pods.selectors, Selectors::new().fields("spec.nodeName=n"));

        let config_maps = options.resolve::<ConfigMap>(true);
        assert_eq!(config_maps.namespaces, options.default_namespaces);
        assert_eq!(config_maps.selectors, Selectors::new().labels("app=web"));

        let namespaces = options.resolve::<Namespace>(false);
        assert_eq!(namespaces.namespaces, Namespaces::All);
        assert_eq!(namespaces.selectors, Selectors::new().labels("team=x"));
    }
}
