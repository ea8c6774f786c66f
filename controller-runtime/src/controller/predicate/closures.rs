//! Predicates of one kind from closures over its objects: [`from_fn`] and [`update_fn`].

use std::fmt;
use std::marker::PhantomData;

use kube::core::ObjectMeta;

use super::Predicate;

/// Passes the events whose object `f` accepts (for an update: the new object); built with
/// [`from_fn`].
pub struct FromFn<K, F> {
    f: F,
    _kind: PhantomData<fn(&K)>,
}

/// A predicate of kind `K` from a closure over the object: `f(obj)` decides creates and
/// deletes, `f(new)` updates (controller-runtime's `NewPredicateFuncs`). Annotate the
/// argument's type: `from_fn(|deployment: &Deployment| ..)`.
pub fn from_fn<K, F>(f: F) -> FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    FromFn {
        f,
        _kind: PhantomData,
    }
}

impl<K, F> fmt::Debug for FromFn<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

impl<K: 'static, F> Predicate<K> for FromFn<K, F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    fn create(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        (self.f)(new)
    }
    fn delete(&self, obj: &K) -> bool {
        (self.f)(obj)
    }
}

/// Passes the updates `f(old, new)` accepts, and every create and delete; built with
/// [`update_fn`].
pub struct UpdateFn<K, F> {
    f: F,
    _kind: PhantomData<fn(&K)>,
}

/// A predicate of kind `K` that filters updates with a closure over the old and the new object
/// (say, "the spec field I care about changed"); creates and deletes pass.
pub fn update_fn<K, F>(f: F) -> UpdateFn<K, F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    UpdateFn {
        f,
        _kind: PhantomData,
    }
}

impl<K, F> fmt::Debug for UpdateFn<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UpdateFn")
    }
}

impl<K: 'static, F> Predicate<K> for UpdateFn<K, F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    fn update(&self, old: &K, new: &K) -> bool {
        (self.f)(old, new)
    }
    fn create_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
    fn delete_lean(&self, _meta: &ObjectMeta) -> Option<bool> {
        Some(true)
    }
}
