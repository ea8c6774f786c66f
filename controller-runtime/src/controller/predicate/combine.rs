//! Predicates made of others: [`and`], [`or`], [`not`], and how their lean answers combine.

use kube::core::ObjectMeta;

use super::Predicate;

/// Both lean answers hold (`None` when either is unknown and neither is a `false`).
pub(super) fn both(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// Either lean answer holds (`None` when either is unknown and neither is a `true`).
fn either(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
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
pub fn and<A, B>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// Either `a` or `b` must pass.
pub fn or<A, B>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// `a` must not pass.
pub fn not<A>(a: A) -> Not<A> {
    Not(a)
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for And<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) && self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) && self.1.delete(obj)
    }
    fn passes_all(&self) -> bool {
        self.0.passes_all() && self.1.passes_all()
    }
    fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        both(self.0.create_lean(meta), self.1.create_lean(meta))
    }
    fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        both(self.0.update_lean(old, new), self.1.update_lean(old, new))
    }
    fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        both(self.0.delete_lean(meta), self.1.delete_lean(meta))
    }
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Or<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) || self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) || self.1.delete(obj)
    }
    fn passes_all(&self) -> bool {
        self.0.passes_all() || self.1.passes_all()
    }
    fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        either(self.0.create_lean(meta), self.1.create_lean(meta))
    }
    fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        either(self.0.update_lean(old, new), self.1.update_lean(old, new))
    }
    fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        either(self.0.delete_lean(meta), self.1.delete_lean(meta))
    }
}

impl<K, A: Predicate<K>> Predicate<K> for Not<A> {
    fn create(&self, obj: &K) -> bool {
        !self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        !self.0.delete(obj)
    }
    fn create_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        self.0.create_lean(meta).map(|passes| !passes)
    }
    fn update_lean(&self, old: &ObjectMeta, new: &ObjectMeta) -> Option<bool> {
        self.0.update_lean(old, new).map(|passes| !passes)
    }
    fn delete_lean(&self, meta: &ObjectMeta) -> Option<bool> {
        self.0.delete_lean(meta).map(|passes| !passes)
    }
}
