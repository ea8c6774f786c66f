//! Where and what a shared informer watches: [`InformerScope`] (a namespace or all, and
//! [`Selectors`] or the factory's), and [`Scoped`], how a kind of each scope is confined to a
//! namespace.

use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Resource};

/// Label and field selectors an informer lists and watches with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selectors {
    pub(crate) labels: Option<String>,
    pub(crate) fields: Option<String>,
}

impl Selectors {
    /// No selectors: every object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only objects whose labels match `selector` (e.g. `app=web,tier!=db`).
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.labels = Some(selector.into());
        self
    }

    /// Only objects whose fields match `selector` (e.g. `spec.nodeName=node-a`).
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.fields = Some(selector.into());
        self
    }

    /// The label selector, if any.
    pub fn label_selector(&self) -> Option<&str> {
        self.labels.as_deref()
    }

    /// These selectors with `requirement` (e.g. `tier=web`) added to the label selector: objects
    /// must match both.
    pub fn and_labels(self, requirement: &str) -> Self {
        let combined = match self.label_selector() {
            Some(labels) if !labels.is_empty() => format!("{labels},{requirement}"),
            _ => requirement.to_owned(),
        };
        self.labels(combined)
    }
}

/// Which objects of a kind one shared informer watches: those of one namespace (all when none)
/// that match its selectors (the factory's when none). Informers of different scopes are
/// different informers.
///
/// ```
/// use informer::{InformerScope, Selectors};
///
/// let everything = InformerScope::all();
/// let web_in_shop = InformerScope::namespace("shop").selectors(Selectors::new().labels("app=web"));
/// # let _ = (everything, web_in_shop);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InformerScope {
    namespace: Option<String>,
    selectors: Option<Selectors>,
}

impl InformerScope {
    /// Every namespace (or, for a cluster-scoped kind, the whole cluster), with the factory's
    /// selectors.
    pub fn all() -> Self {
        Self::default()
    }

    /// One namespace, with the factory's selectors. Ignored for a cluster-scoped kind, whose
    /// objects live in no namespace.
    pub fn namespace(namespace: impl Into<String>) -> Self {
        Self {
            namespace: Some(namespace.into()),
            selectors: None,
        }
    }

    /// One namespace if `namespace` names one, else every namespace.
    pub fn namespace_or_all(namespace: Option<&str>) -> Self {
        match namespace {
            Some(namespace) => Self::namespace(namespace),
            None => Self::all(),
        }
    }

    /// These selectors instead of the factory's.
    pub fn selectors(mut self, selectors: Selectors) -> Self {
        self.selectors = Some(selectors);
        self
    }

    /// The namespace watched, if one.
    pub(crate) fn namespace_name(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The selectors asked for, if any.
    pub(crate) fn own_selectors(&self) -> Option<&Selectors> {
        self.selectors.as_ref()
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for kube::core::NamespaceResourceScope {}
    impl Sealed for kube::core::ClusterResourceScope {}
}

/// The scope of a typed resource (`NamespaceResourceScope` or `ClusterResourceScope`), as an
/// informer confines its list and watch to a namespace; sealed.
pub trait Scoped: sealed::Sealed {
    /// `api` confined to `namespace`: only a namespaced kind is.
    fn confine<K: Resource<Scope = Self>>(api: Api<K>, namespace: Option<&str>) -> Api<K>;
}

impl Scoped for NamespaceResourceScope {
    fn confine<K: Resource<Scope = Self>>(api: Api<K>, namespace: Option<&str>) -> Api<K> {
        match namespace {
            Some(namespace) => api.constrain(namespace),
            None => api,
        }
    }
}

impl Scoped for ClusterResourceScope {
    fn confine<K: Resource<Scope = Self>>(api: Api<K>, _namespace: Option<&str>) -> Api<K> {
        api
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn and_labels_adds_a_requirement_to_the_label_selector() {
        let none = Selectors::new().and_labels("shard=a");
        assert_eq!(none.label_selector(), Some("shard=a"));
        let some = Selectors::new()
            .labels("app=web")
            .fields("metadata.name=x")
            .and_labels("shard=a");
        assert_eq!(some.label_selector(), Some("app=web,shard=a"));
        assert_eq!(some.fields.as_deref(), Some("metadata.name=x"));
        let empty = Selectors::new().labels("").and_labels("shard=a");
        assert_eq!(empty.label_selector(), Some("shard=a"));
    }
}
