//! Predicates: which watch events a controller turns into requests.
//!
//! Predicates look at object metadata only, so one predicate works for every watched type and
//! can be applied to all watches of a controller at once
//! ([`with_event_filter`](crate::ControllerBuilder::with_event_filter)) or to one watch. Filters
//! on an object's content belong in the reconciler or in a [`watches`](crate::ControllerBuilder::watches)
//! mapper (which may return no request).
//!
//! Resyncs and relists arrive as updates whose old and new objects have the same
//! `resourceVersion`; [`ResourceVersionChanged`] and [`GenerationChanged`] drop them.

use std::sync::Arc;

use kube::core::{ObjectMeta, Selector, SelectorExt};

/// Decides whether a create, update or delete event of an object enqueues a request. Each
/// method defaults to `true` (let the event through).
pub trait Predicate: Send + Sync + 'static {
    /// An object appeared (including the initial list).
    fn create(&self, meta: &ObjectMeta) -> bool {
        let _ = meta;
        true
    }

    /// An object changed from `old` to `new`.
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        let _ = (old, new);
        true
    }

    /// An object was deleted (`meta` is its last known state).
    fn delete(&self, meta: &ObjectMeta) -> bool {
        let _ = meta;
        true
    }
}

impl<P: Predicate + ?Sized> Predicate for Arc<P> {
    fn create(&self, meta: &ObjectMeta) -> bool {
        (**self).create(meta)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        (**self).update(old, new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        (**self).delete(meta)
    }
}

impl<P: Predicate + ?Sized> Predicate for Box<P> {
    fn create(&self, meta: &ObjectMeta) -> bool {
        (**self).create(meta)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        (**self).update(old, new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        (**self).delete(meta)
    }
}

/// Passes updates that change `metadata.generation` (spec changes, for types that have one);
/// creates and deletes pass. Status-only updates and resyncs are dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl Predicate for GenerationChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.generation != new.generation
    }
}

/// Passes updates that change the labels; creates and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl Predicate for LabelsChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.labels != new.labels
    }
}

/// Passes updates that change the annotations; creates and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl Predicate for AnnotationsChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.annotations != new.annotations
    }
}

/// Passes updates that change `metadata.resourceVersion` (drops resyncs and relists of
/// unchanged objects); creates and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl Predicate for ResourceVersionChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.resource_version != new.resource_version
    }
}

/// Passes events of objects whose labels match a selector (for updates: the new object).
#[derive(Clone, Debug)]
pub struct LabelSelector(pub Selector);

impl LabelSelector {
    fn matches(&self, meta: &ObjectMeta) -> bool {
        match &meta.labels {
            Some(labels) => self.0.matches(labels),
            None => self.0.matches(&Default::default()),
        }
    }
}

impl Predicate for LabelSelector {
    fn create(&self, meta: &ObjectMeta) -> bool {
        self.matches(meta)
    }
    fn update(&self, _old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.matches(new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        self.matches(meta)
    }
}

/// Passes an event when both predicates do; built with [`and`].
#[derive(Clone, Debug)]
pub struct And<A, B>(A, B);

/// Passes an event when either predicate does; built with [`or`].
#[derive(Clone, Debug)]
pub struct Or<A, B>(A, B);

/// Passes an event when the predicate does not; built with [`not`].
#[derive(Clone, Debug)]
pub struct Not<A>(A);

/// Both `a` and `b` must pass.
pub fn and<A: Predicate, B: Predicate>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// Either `a` or `b` must pass.
pub fn or<A: Predicate, B: Predicate>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// `a` must not pass.
pub fn not<A: Predicate>(a: A) -> Not<A> {
    Not(a)
}

impl<A: Predicate, B: Predicate> Predicate for And<A, B> {
    fn create(&self, meta: &ObjectMeta) -> bool {
        self.0.create(meta) && self.1.create(meta)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        self.0.delete(meta) && self.1.delete(meta)
    }
}

impl<A: Predicate, B: Predicate> Predicate for Or<A, B> {
    fn create(&self, meta: &ObjectMeta) -> bool {
        self.0.create(meta) || self.1.create(meta)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        self.0.delete(meta) || self.1.delete(meta)
    }
}

impl<A: Predicate> Predicate for Not<A> {
    fn create(&self, meta: &ObjectMeta) -> bool {
        !self.0.create(meta)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, meta: &ObjectMeta) -> bool {
        !self.0.delete(meta)
    }
}

/// Every predicate of a list must pass (an empty list passes everything).
pub(crate) type Predicates = Arc<[Arc<dyn Predicate>]>;

pub(crate) fn all_create(predicates: &[Arc<dyn Predicate>], meta: &ObjectMeta) -> bool {
    predicates.iter().all(|p| p.create(meta))
}

pub(crate) fn all_update(
    predicates: &[Arc<dyn Predicate>],
    old: &ObjectMeta,
    new: &ObjectMeta,
) -> bool {
    predicates.iter().all(|p| p.update(old, new))
}

pub(crate) fn all_delete(predicates: &[Arc<dyn Predicate>], meta: &ObjectMeta) -> bool {
    predicates.iter().all(|p| p.delete(meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(
        generation: i64,
        rv: &str,
        labels: &[(&str, &str)],
        annotations: &[(&str, &str)],
    ) -> ObjectMeta {
        ObjectMeta {
            generation: Some(generation),
            resource_version: Some(rv.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn change_predicates_filter_updates_only() {
        let base = meta(1, "10", &[("app", "a")], &[("x", "1")]);
        let status_only = meta(1, "11", &[("app", "a")], &[("x", "1")]);
        let relabelled = meta(1, "12", &[("app", "b")], &[("x", "1")]);
        let annotated = meta(1, "13", &[("app", "a")], &[("x", "2")]);
        let spec = meta(2, "14", &[("app", "a")], &[("x", "1")]);

        assert!(!GenerationChanged.update(&base, &status_only));
        assert!(GenerationChanged.update(&base, &spec));
        assert!(GenerationChanged.create(&base) && GenerationChanged.delete(&base));
        assert!(!LabelsChanged.update(&base, &annotated));
        assert!(LabelsChanged.update(&base, &relabelled));
        assert!(!AnnotationsChanged.update(&base, &relabelled));
        assert!(AnnotationsChanged.update(&base, &annotated));
        assert!(!ResourceVersionChanged.update(&base, &base));
        assert!(ResourceVersionChanged.update(&base, &status_only));
    }

    #[test]
    fn selector_and_combinators() {
        let selector = LabelSelector([("app", "a")].into_iter().collect::<Selector>());
        let a = meta(1, "1", &[("app", "a")], &[]);
        let b = meta(1, "2", &[("app", "b")], &[]);
        assert!(selector.create(&a) && !selector.create(&b));
        assert!(selector.update(&b, &a) && !selector.update(&a, &b));
        assert!(!selector.delete(&b));

        let spec_or_labels = or(GenerationChanged, LabelsChanged);
        assert!(spec_or_labels.update(&a, &b));
        assert!(!spec_or_labels.update(&a, &meta(1, "3", &[("app", "a")], &[])));
        let both = and(ResourceVersionChanged, not(LabelsChanged));
        assert!(both.update(&a, &meta(1, "3", &[("app", "a")], &[])));
        assert!(!both.update(&a, &b));
        assert!(!not(ResourceVersionChanged).create(&a));

        let list: Vec<Arc<dyn Predicate>> = vec![Arc::new(GenerationChanged), Arc::new(selector)];
        assert!(all_create(&list, &a) && !all_create(&list, &b));
        assert!(!all_update(&list, &a, &a));
        assert!(all_delete(&[], &b));
    }
}
