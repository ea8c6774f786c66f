//! [`Lister`]: namespace and label-selector reads over an [`Indexer`].

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::Resource;
use kube::core::{Selector, SelectorExt};

use crate::{Indexer, NAMESPACE_INDEX, ObjectKey};

/// Labels of an object without labels.
static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// Read access to an [`Indexer`] the way controllers read a cache: by label selector, by
/// namespace, and by name (client-go's generated listers).
///
/// Takes kube's label [`Selector`], so the selectors used with `kube::Api` work here too.
/// `Selector::default()` selects everything.
pub struct Lister<K> {
    indexer: Indexer<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
        }
    }
}

impl<K: Resource> Lister<K> {
    /// A lister reading from `indexer`.
    pub fn new(indexer: Indexer<K>) -> Self {
        Self { indexer }
    }

    /// The indexer this lister reads.
    pub fn indexer(&self) -> &Indexer<K> {
        &self.indexer
    }

    /// Every object, in any namespace, whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let mut out = Vec::new();
        self.indexer
            .for_each(|obj| push_if_selected(&mut out, obj, selector));
        out
    }

    /// The cluster-scoped object called `name`, if cached.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let key = ObjectKey::cluster_scoped(name).ok()?;
        self.indexer.get_by_key(&key)
    }

    /// Reads limited to `namespace`. An empty namespace means all namespaces, as in client-go.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            namespace: namespace.to_owned(),
        }
    }
}

/// Reads limited to one namespace, from [`Lister::namespace`].
pub struct NamespaceLister<K> {
    indexer: Indexer<K>,
    namespace: String,
}

impl<K: Resource> NamespaceLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The objects in this namespace whose labels match `selector`.
    ///
    /// Served from the [`NAMESPACE_INDEX`] when the indexer has it; otherwise (with a warning in
    /// the log) by scanning every object.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let mut out = Vec::new();
        if self.namespace.is_empty() {
            self.indexer
                .for_each(|obj| push_if_selected(&mut out, obj, selector));
        } else {
            let indexed = self
                .indexer
                .for_each_indexed(NAMESPACE_INDEX, &self.namespace, |obj| {
                    push_if_selected(&mut out, obj, selector)
                });
            if indexed.is_err() {
                tracing::warn!(
                    namespace = %self.namespace,
                    "indexer has no namespace index; listing the namespace by scanning every object"
                );
                self.indexer.for_each(|obj| {
                    if obj.meta().namespace.as_deref() == Some(self.namespace.as_str()) {
                        push_if_selected(&mut out, obj, selector);
                    }
                });
            }
        }
        out
    }

    /// The object called `name` in this namespace, if cached.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let key = ObjectKey::new(Some(&self.namespace), name).ok()?;
        self.indexer.get_by_key(&key)
    }
}

fn push_if_selected<K: Resource>(out: &mut Vec<Arc<K>>, obj: &Arc<K>, selector: &Selector) {
    if selector.selects_all() || selector.matches(obj.meta().labels.as_ref().unwrap_or(&NO_LABELS))
    {
        out.push(Arc::clone(obj));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Indexers, Store};
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::core::ObjectMeta;

    fn meta(ns: Option<&str>, name: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: ns.map(Into::into),
            name: Some(name.into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn namespace_list_without_the_index_falls_back_to_a_scan() {
        let idx = Indexer::new(Indexers::new());
        for (ns, name) in [("a", "x"), ("b", "y"), ("a", "z")] {
            idx.add(Arc::new(ConfigMap {
                metadata: meta(Some(ns), name),
                ..ConfigMap::default()
            }))
            .unwrap();
        }
        let lister = Lister::new(idx);
        assert_eq!(lister.namespace("a").list(&Selector::default()).len(), 2);
        assert_eq!(lister.namespace("").list(&Selector::default()).len(), 3);
    }

    #[test]
    fn cluster_scoped_get_reads_by_name() {
        let idx = Indexer::new(Indexers::new().with_namespace());
        idx.add(Arc::new(Namespace {
            metadata: meta(None, "kube-system"),
            ..Namespace::default()
        }))
        .unwrap();
        let lister = Lister::new(idx);
        assert!(lister.get("kube-system").is_some());
        assert!(lister.get("default").is_none());
        assert!(lister.get("bad/name").is_none());
    }
}
