//! Index functions and the set of indices an [`Indexer`](crate::Indexer) maintains.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use kube::Resource;

/// The name of the built-in namespace index (client-go's `cache.NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// Computes the values under which an object is indexed; an empty list leaves it out of the index.
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Reads the single value under which an object is indexed straight from the object (or `None` to
/// leave it out). Such an index costs no allocation per write; the namespace index is one.
pub type FieldFn<K> = for<'a> fn(&'a K) -> Option<&'a str>;

/// How one index computes an object's values.
pub(crate) enum IndexFunc<K> {
    /// The namespace, read from the object's key: it never changes while the key stays the same,
    /// so updates skip this index. The function reads it from an object that has no key yet.
    Namespace(FieldFn<K>),
    /// At most one value, borrowed from the object.
    Field(FieldFn<K>),
    /// Any number of owned values.
    Values(IndexFn<K>),
}

impl<K> IndexFunc<K> {
    /// The object's values, owned.
    pub(crate) fn values(&self, obj: &K) -> Vec<String> {
        match self {
            IndexFunc::Namespace(field) | IndexFunc::Field(field) => {
                field(obj).map(str::to_owned).into_iter().collect()
            }
            IndexFunc::Values(values) => values(obj),
        }
    }
}

impl<K> Clone for IndexFunc<K> {
    fn clone(&self) -> Self {
        match self {
            IndexFunc::Namespace(field) => IndexFunc::Namespace(*field),
            IndexFunc::Field(field) => IndexFunc::Field(*field),
            IndexFunc::Values(values) => IndexFunc::Values(Arc::clone(values)),
        }
    }
}

fn namespace_of<K: Resource>(obj: &K) -> Option<&str> {
    obj.meta().namespace.as_deref().filter(|ns| !ns.is_empty())
}

/// The index function of the built-in namespace index: an object's namespace, or nothing for a
/// cluster-scoped object.
pub fn namespace_index_fn<K: Resource>() -> IndexFn<K> {
    Arc::new(|obj: &K| namespace_of(obj).map(str::to_owned).into_iter().collect())
}

/// A set of named index functions, given to [`Indexer::new`](crate::Indexer::new) or
/// [`Indexer::add_indexers`](crate::Indexer::add_indexers).
///
/// ```
/// use indexer::Indexers;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let indexers = Indexers::<Pod>::new()
///     .with_namespace()
///     .with("by-node", |pod: &Pod| {
///         pod.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect()
///     });
/// assert_eq!(indexers.names().collect::<Vec<_>>(), ["by-node", "namespace"]);
/// ```
pub struct Indexers<K> {
    functions: BTreeMap<String, IndexFunc<K>>,
}

impl<K> Indexers<K> {
    /// No indices.
    pub fn new() -> Self {
        Self {
            functions: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) the index `name`, computed by `index_fn`.
    pub fn with(
        self,
        name: impl Into<String>,
        index_fn: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.with_fn(name, Arc::new(index_fn))
    }

    /// Adds (or replaces) the index `name` with an already shared index function.
    pub fn with_fn(mut self, name: impl Into<String>, index_fn: IndexFn<K>) -> Self {
        self.functions
            .insert(name.into(), IndexFunc::Values(index_fn));
        self
    }

    /// Adds (or replaces) the single-valued index `name`, whose value is borrowed from the object by
    /// `field`. Prefer it to [`with`](Self::with) for hot indices: it allocates nothing per write.
    ///
    /// ```
    /// # use indexer::Indexers;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let indexers = Indexers::<Pod>::new()
    ///     .with_field("by-node", |pod| pod.spec.as_ref()?.node_name.as_deref());
    /// # assert!(!indexers.is_empty());
    /// ```
    pub fn with_field(mut self, name: impl Into<String>, field: FieldFn<K>) -> Self {
        self.functions.insert(name.into(), IndexFunc::Field(field));
        self
    }

    /// The names of the indices, in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    /// Whether no index is defined.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    pub(crate) fn into_inner(self) -> BTreeMap<String, IndexFunc<K>> {
        self.functions
    }
}

impl<K: Resource> Indexers<K> {
    /// Adds the built-in [`NAMESPACE_INDEX`], which [`Lister::namespace`](crate::Lister::namespace)
    /// reads from.
    pub fn with_namespace(mut self) -> Self {
        self.functions.insert(
            NAMESPACE_INDEX.to_owned(),
            IndexFunc::Namespace(namespace_of::<K>),
        );
        self
    }
}

impl<K> Default for Indexers<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> Clone for Indexers<K> {
    fn clone(&self) -> Self {
        Self {
            functions: self.functions.clone(),
        }
    }
}

impl<K> fmt::Debug for Indexers<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.functions.keys()).finish()
    }
}
