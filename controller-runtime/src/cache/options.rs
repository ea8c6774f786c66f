//! What the manager caches: the default namespaces and selectors of every kind, and per-kind
//! settings ([`ByObject`]) — controller-runtime's `cache.Options.DefaultNamespaces` and
//! `ByObject` — resolved the same way for typed, metadata-only and dynamic caches.
//!
//! Resolution, for the cache of one kind in one representation:
//! - namespaces: the kind's own set if given, else the manager's default namespaces; always all
//!   namespaces for a cluster-scoped kind;
//! - label selector and field selector, each on its own: the kind's if given, else the
//!   manager's default;
//! - transform: the one given for that representation, if any.
//!
//! A kind's settings may come in several [`ByObject`]s (of any of its representations); they
//! combine the same whatever their order: namespace sets are joined, label and field selectors
//! are all required (`app=web` and `tier=db` cache what matches both), and each representation
//! takes at most one transform (a second one, or namespaces for a cluster-scoped kind, is
//! [`Error::InvalidSettings`]).

use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use informer::{Object, Selectors, TransformFn};
use kube::api::DynamicObject;

use crate::cache::error::Error;
use crate::cache::kind::{CacheKind, CacheSpec, KindId, KindKey};
use crate::cache::storage::Storage;
use crate::kind::DynamicKind;

/// Cache settings of one kind, overriding the manager's defaults: the namespaces it is cached
/// in (namespaced kinds only), its label and field selectors, and a transform applied to each
/// object before it is cached and handed to controllers. Made with [`ByObject::of`] (a typed
/// kind, or [`Metadata<K>`](crate::cache::Metadata) for its metadata-only cache) or
/// [`ByObject::dynamic`]; give it to
/// [`ManagerBuilder::by_object`](crate::manager::ManagerBuilder::by_object).
///
/// Namespaces and selectors belong to the kind: they apply to its full, metadata-only and
/// dynamic caches alike. A transform belongs to the representation it is typed over.
///
/// ```
/// # use controller_runtime::cache::{ByObject, Metadata};
/// # use k8s_openapi::api::core::v1::{Node, Pod, Secret};
/// // Pods: only in two namespaces, only those labelled app=web, without their annotations.
/// let pods = ByObject::of::<Pod>()
///     .namespaces(["shop", "billing"])
///     .labels("app=web")
///     .transform(|pod| {
///         let mut pod = std::sync::Arc::unwrap_or_clone(pod);
///         pod.metadata.annotations = None;
///         Ok(std::sync::Arc::new(pod))
///     });
/// // Nodes (cluster-scoped): selectors and transforms apply; namespaces do not exist.
/// let nodes = ByObject::of::<Node>().labels("node-role.kubernetes.io/worker");
/// // Secrets' metadata-only cache: only those of this operator.
/// let secrets = ByObject::of::<Metadata<Secret>>().labels("app.kubernetes.io/managed-by=shop");
/// # let _ = (pods, nodes, secrets);
/// ```
pub struct ByObject<T: Object = DynamicObject> {
    key: KindKey,
    kind: String,
    namespaced: bool,
    namespaces: Option<BTreeSet<String>>,
    /// Every label selector given, each required.
    labels: Option<BTreeSet<String>>,
    /// Every field selector given, each required.
    fields: Option<BTreeSet<String>>,
    transform: Option<TransformFn<T>>,
    storage: Option<Storage>,
}

impl<T: Object> fmt::Debug for ByObject<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByObject")
            .field("kind", &self.kind)
            .field("namespaces", &self.namespaces)
            .field("labels", &self.labels)
            .field("fields", &self.fields)
            .field("transform", &self.transform.is_some())
            .field("storage", &self.storage)
            .finish()
    }
}

impl ByObject {
    /// Settings of the kind `C`: a typed kind (`ByObject::of::<Pod>()`) or the metadata-only
    /// cache of one (`ByObject::of::<Metadata<Secret>>()`).
    pub fn of<C: CacheKind>() -> ByObject<C::Object> {
        ByObject::from_spec(&C::spec())
    }

    /// Settings of the dynamic kind `kind`.
    pub fn dynamic(kind: &DynamicKind) -> ByObject<DynamicObject> {
        ByObject::from_spec(&kind.spec())
    }
}

impl<T: Object> ByObject<T> {
    fn from_spec(spec: &CacheSpec<T>) -> Self {
        Self {
            key: spec.key.clone(),
            kind: spec.kind.clone(),
            namespaced: spec.namespaced,
            namespaces: None,
            labels: None,
            fields: None,
            transform: None,
            storage: None,
        }
    }

    /// Caches this kind in exactly these namespaces (one watch each), instead of the manager's
    /// default namespaces; an empty set means all namespaces. For namespaced kinds only (a
    /// cluster-scoped kind given namespaces is [`Error::InvalidSettings`]).
    pub fn namespaces<I, S>(mut self, namespaces: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let set = self.namespaces.get_or_insert_with(BTreeSet::new);
        set.extend(namespaces.into_iter().map(Into::into));
        self
    }

    /// Only objects whose labels match `selector` (e.g. `app=web,tier!=db`) are cached; with
    /// several, objects must match all of them.
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        require(&mut self.labels, selector.into());
        self
    }

    /// Only objects whose fields match `selector` (e.g. `spec.nodeName=node-a`) are cached;
    /// with several, objects must match all of them.
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        require(&mut self.fields, selector.into());
        self
    }

    /// Applies `transform` to every object before it is cached and handed to controllers (after
    /// the manager strips managed fields, if it does). It must keep the object's namespace and
    /// name. One per kind and representation.
    pub fn transform(
        mut self,
        transform: impl Fn(Arc<T>) -> Result<Arc<T>, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }

    /// How the kind's full objects are kept ([`Storage`]): typed or compact, overriding the
    /// manager's [`default_storage`](crate::manager::ManagerBuilder::default_storage). It
    /// applies to the kind's typed cache (metadata-only and dynamic caches are always typed);
    /// given twice for one kind, or compact together with a transform, it is
    /// [`Error::InvalidSettings`].
    pub fn storage(mut self, storage: Storage) -> Self {
        self.storage = Some(storage);
        self
    }
}

/// Adds `selector` to the selectors that must all match (an empty one matches everything, so
/// it only marks the selectors as given).
fn require(selectors: &mut Option<BTreeSet<String>>, selector: String) {
    let selectors = selectors.get_or_insert_with(BTreeSet::new);
    if !selector.is_empty() {
        selectors.insert(selector);
    }
}

/// Every selector of a set, each required: `a,b`, in the set's order, so the result does not
/// depend on the order they were given in.
fn all_of(selectors: &BTreeSet<String>) -> String {
    selectors
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

/// Where a kind is cached: across all namespaces (one watch) or in a set of namespaces (one
/// watch each). Cluster-scoped kinds are always cached cluster-wide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Namespaces {
    /// One watch across all namespaces.
    #[default]
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

    /// The namespaces as a list; `None` for all.
    pub(crate) fn to_list(&self) -> Option<Vec<String>> {
        match self {
            Self::All => None,
            Self::Only(set) => Some(set.iter().cloned().collect()),
        }
    }
}

/// The settings of one kind, merged from every [`ByObject`] given for it.
#[derive(Default)]
struct KindSettings {
    /// `Some(empty)`: all namespaces, asked for explicitly.
    namespaces: Option<BTreeSet<String>>,
    /// `Some(empty)`: no label selector, asked for explicitly (the default does not apply).
    labels: Option<BTreeSet<String>>,
    /// `Some(empty)`: no field selector, asked for explicitly.
    fields: Option<BTreeSet<String>>,
    /// Per representation (`true`: metadata-only): a `TransformFn` of its object type.
    transforms: HashMap<bool, Arc<dyn Any + Send + Sync>>,
    /// How the kind's full objects are kept, if given.
    storage: Option<Storage>,
    /// What contradicts: reported whenever the kind's cache is made, and by `start`.
    problems: Vec<String>,
    kind: String,
}

/// One kind's resolved settings.
pub(crate) struct Resolved<T> {
    pub(crate) namespaces: Namespaces,
    pub(crate) selectors: Selectors,
    pub(crate) transform: Option<TransformFn<T>>,
    /// How the objects are kept (always typed for metadata-only and dynamic caches, and for
    /// a kind with a transform).
    pub(crate) storage: Storage,
}

/// The manager's cache settings: defaults and per-kind settings.
#[derive(Default)]
pub(crate) struct CacheOptions {
    pub(crate) default_namespaces: Namespaces,
    pub(crate) default_selectors: Selectors,
    pub(crate) default_storage: Storage,
    by_kind: HashMap<KindId, KindSettings>,
}

impl CacheOptions {
    /// Merges `settings` into its kind's (see the module docs for how they combine).
    pub(crate) fn insert<T: Object>(&mut self, settings: ByObject<T>) {
        let kind = self.by_kind.entry(settings.key.kind.clone()).or_default();
        if kind.kind.is_empty() || !settings.key.metadata {
            kind.kind = settings.kind.trim_end_matches(" metadata").to_owned();
        }
        if let Some(namespaces) = settings.namespaces {
            if settings.namespaced {
                // An empty set asks for all namespaces, which covers any other set.
                let joined = match kind.namespaces.take() {
                    Some(before) if before.is_empty() || namespaces.is_empty() => BTreeSet::new(),
                    Some(mut before) => {
                        before.extend(namespaces);
                        before
                    }
                    None => namespaces,
                };
                kind.namespaces = Some(joined);
            } else {
                kind.problems.push(
                    "namespaces were given for a cluster-scoped kind; remove `namespaces(...)` (its objects live in no namespace)"
                        .to_owned(),
                );
            }
        }
        if let Some(labels) = settings.labels {
            kind.labels.get_or_insert_with(BTreeSet::new).extend(labels);
        }
        if let Some(fields) = settings.fields {
            kind.fields.get_or_insert_with(BTreeSet::new).extend(fields);
        }
        if let Some(transform) = settings.transform {
            let previous = kind
                .transforms
                .insert(settings.key.metadata, Arc::new(transform));
            if previous.is_some() {
                kind.problems.push(format!(
                    "two transforms were given for {}; compose them into one",
                    settings.kind
                ));
            }
        }
        if let Some(storage) = settings.storage
            && kind.storage.replace(storage).is_some()
        {
            kind.problems
                .push("two storages were given for the kind; give `storage(...)` once".to_owned());
        }
        let typed_transform = kind.transforms.contains_key(&false);
        if typed_transform && kind.storage.as_ref().is_some_and(Storage::is_compact) {
            let problem = "a transform works on typed objects, and the kind's storage is compact; give it `Storage::typed()` or drop the transform".to_owned();
            if !kind.problems.contains(&problem) {
                kind.problems.push(problem);
            }
        }
    }

    /// The resolved settings of the cache `spec` describes; [`Error::InvalidSettings`] if the
    /// kind's settings contradict each other.
    pub(crate) fn resolve<T: Object>(&self, spec: &CacheSpec<T>) -> Result<Resolved<T>, Error> {
        let own = self.by_kind.get(&spec.key.kind);
        if let Some(own) = own
            && let Some(problem) = own.problems.first()
        {
            return Err(Error::InvalidSettings {
                kind: own.kind.clone(),
                reason: problem.clone(),
            });
        }
        let namespaces = match (spec.namespaced, own.and_then(|own| own.namespaces.clone())) {
            (false, _) => Namespaces::All,
            (true, Some(set)) => Namespaces::from_set(set),
            (true, None) => self.default_namespaces.clone(),
        };
        let mut selectors = self.default_selectors.clone();
        if let Some(labels) = own.and_then(|own| own.labels.as_ref()) {
            selectors = selectors.labels(all_of(labels));
        }
        if let Some(fields) = own.and_then(|own| own.fields.as_ref()) {
            selectors = selectors.fields(all_of(fields));
        }
        let transform = own
            .and_then(|own| own.transforms.get(&spec.key.metadata))
            .and_then(|transform| Arc::clone(transform).downcast::<TransformFn<T>>().ok())
            .map(|transform| (*transform).clone());
        let own_storage = own.and_then(|own| own.storage.clone());
        // Storage is a choice of typed caches only.
        let asked = spec.storage.as_ref().filter(|_| spec.compact.is_some());
        if let (Some(asked), Some(own_storage)) = (asked, &own_storage)
            && asked.is_compact() != own_storage.is_compact()
        {
            return Err(Error::InvalidSettings {
                kind: spec.kind.clone(),
                reason: format!(
                    "a watch asks for {} storage and the kind's settings for {}; give one",
                    asked.name(),
                    own_storage.name()
                ),
            });
        }
        if asked.is_some_and(Storage::is_compact) && transform.is_some() {
            return Err(Error::InvalidSettings {
                kind: spec.kind.clone(),
                reason: "a transform works on typed objects, and a watch asks for compact storage; drop one".to_owned(),
            });
        }
        let storage = match own_storage.or_else(|| asked.cloned()) {
            _ if spec.key.metadata || spec.compact.is_none() => Storage::typed(),
            Some(storage) => storage,
            // A transform works on typed objects: the default storage yields to it.
            None if transform.is_some() => Storage::typed(),
            None => self.default_storage.clone(),
        };
        Ok(Resolved {
            namespaces,
            selectors,
            transform,
            storage,
        })
    }

    /// Every kind whose settings contradict each other, with the first problem, in the order of
    /// the kinds' names.
    pub(crate) fn problems(&self) -> Vec<Error> {
        let mut problems: Vec<Error> = self
            .by_kind
            .values()
            .filter_map(|settings| {
                let problem = settings.problems.first()?;
                Some(Error::InvalidSettings {
                    kind: settings.kind.clone(),
                    reason: problem.clone(),
                })
            })
            .collect();
        problems.sort_by_key(|problem| problem.to_string());
        problems
    }
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
