//! The built-in predicates that read an object's metadata only, so they are predicates of every
//! kind ([`HasMeta`]); most of them judge from the lean metadata of a compact cache too.

use std::fmt;

use kube::core::{ObjectMeta, Selector, SelectorExt};

use super::{HasMeta, Predicate};

/// A predicate that reads only the lean metadata and passes creates and deletes: its lean
/// answers, from `update` over two metadata.
macro_rules! lean_update_only {
    ($update:expr) => {
        fn create_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
            Some(true)
        }
        fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
            let update: fn(&ObjectMeta, &ObjectMeta) -> bool = $update;
            Some(update(old, new))
        }
        fn delete_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
            Some(true)
        }
    };
}

/// Whether `new` is the first state of `old` with a deletion timestamp: the update that
/// starts a deletion, which the change predicates always pass (a finalizer's cleanup waits
/// for it).
fn deletion_started(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.deletion_timestamp.is_none() && new.deletion_timestamp.is_some()
}

/// Passes updates that change `metadata.generation` (spec changes, for types that have one),
/// and the update that starts a deletion; creates and deletes pass. Status-only and
/// metadata-only updates and resyncs are dropped — your own included: see
/// [the module docs](crate::controller::predicate#your-own-writes-and-the-events-they-cause).
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl<K: HasMeta> Predicate<K> for GenerationChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        generation_changed(old.object_meta(), new.object_meta())
    }
    lean_update_only!(generation_changed);
}

fn generation_changed(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.generation != new.generation || deletion_started(old, new)
}

/// Passes updates that change the labels, and the update that starts a deletion; creates and
/// deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl<K: HasMeta> Predicate<K> for LabelsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        labels_changed(old.object_meta(), new.object_meta())
    }
    lean_update_only!(labels_changed);
}

fn labels_changed(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.labels != new.labels || deletion_started(old, new)
}

/// Passes updates that change the annotations, and the update that starts a deletion; creates
/// and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl<K: HasMeta> Predicate<K> for AnnotationsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        let (old, new) = (old.object_meta(), new.object_meta());
        old.annotations != new.annotations || deletion_started(old, new)
    }
    // Annotations are not lean metadata: updates are judged from the objects.
    fn create_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
    fn delete_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
}

/// Passes updates that change `metadata.resourceVersion` (drops resyncs and relists of
/// unchanged objects); creates and deletes pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl<K: HasMeta> Predicate<K> for ResourceVersionChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        version_changed(old.object_meta(), new.object_meta())
    }
    lean_update_only!(version_changed);
}

fn version_changed(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.resource_version != new.resource_version
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

impl<K: HasMeta> Predicate<K> for LabelSelector {
    fn create(&self, obj: &K) -> bool {
        self.matches(obj.object_meta())
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        self.matches(new.object_meta())
    }
    fn delete(&self, obj: &K) -> bool {
        self.matches(obj.object_meta())
    }
    fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        Some(self.matches(meta))
    }
    fn update_lean(&self, _old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        Some(self.matches(new))
    }
    fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        Some(self.matches(meta))
    }
}

/// Passes the events whose object's metadata `f` accepts (for an update: the new object's), for
/// objects of every kind; built with [`meta_fn`].
#[derive(Clone, Copy)]
pub struct MetaFn<F>(F);

/// A metadata-level predicate from a closure over `ObjectMeta`: works on any watch and in
/// [`with_event_filter`](crate::controller::ControllerBuilder::with_event_filter).
pub fn meta_fn<F>(f: F) -> MetaFn<F>
where
    F: Fn(&ObjectMeta) -> bool + Send + Sync + 'static,
{
    MetaFn(f)
}

impl<F> fmt::Debug for MetaFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MetaFn")
    }
}

impl<K: HasMeta, F> Predicate<K> for MetaFn<F>
where
    F: Fn(&ObjectMeta) -> bool + Send + Sync + 'static,
{
    fn create(&self, obj: &K) -> bool {
        (self.0)(obj.object_meta())
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        (self.0)(new.object_meta())
    }
    fn delete(&self, obj: &K) -> bool {
        (self.0)(obj.object_meta())
    }
}
