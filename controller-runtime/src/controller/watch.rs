//! [`Watch`]: what a controller watches and how — a typed kind, the metadata of one, or a
//! dynamic kind; its predicates — and the cache it reads from.

use std::fmt;

use informer::Object;
use kube::api::DynamicObject;

use crate::cache::{CacheKind, CacheSpec, DynamicKind, Storage};
use crate::controller::predicate::{Everything, Predicate, and};

/// One watch of a controller: the kind it watches, in the representation it is cached in, and
/// the predicates its events must pass. Give it to
/// [`Controller::for_`](crate::controller::Controller::for_) (the primary kind),
/// [`ControllerBuilder::owns`](crate::controller::ControllerBuilder::owns) or
/// [`ControllerBuilder::watches`](crate::controller::ControllerBuilder::watches).
///
/// - [`Watch::of::<K>()`](Watch::of) — full objects of a typed kind (`K`);
/// - [`Watch::of::<Metadata<K>>()`](Watch::of) — `K`'s metadata only
///   ([`Metadata`](crate::cache::Metadata): cached as `PartialObjectMeta<K>`);
/// - [`Watch::dynamic(kind)`](Watch::dynamic) — a kind known only at run time, as
///   `DynamicObject`s.
///
/// Every watch shares the manager's one cache of its kind and representation, with the kind's
/// cache settings ([`ByObject`](crate::cache::ByObject)).
///
/// ```
/// # use controller_runtime::controller::{Watch, predicate::{GenerationChanged, LabelsChanged}};
/// # use controller_runtime::cache::Metadata;
/// # use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
/// // Deployments, only when their spec changed.
/// let deployments = Watch::of::<Deployment>().predicate(GenerationChanged);
/// // Secrets' metadata, only when their labels changed: their data is never cached.
/// let secrets = Watch::of::<Metadata<Secret>>().predicate(LabelsChanged);
/// # let _ = (deployments, secrets);
/// ```
pub struct Watch<T: Object = DynamicObject> {
    pub(crate) spec: CacheSpec<T>,
    pub(crate) predicate: Box<dyn Predicate<T>>,
    pub(crate) name: String,
}

impl<T: Object> fmt::Debug for Watch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch").field("kind", &self.name).finish()
    }
}

impl Watch {
    /// A watch of the compile-time kind `C`: a typed [`Kind`](crate::cache::Kind)
    /// (`Watch::of::<Pod>()`) or the metadata of one
    /// (`Watch::of::<Metadata<Secret>>()`).
    pub fn of<C: CacheKind>() -> Watch<C::Object> {
        Watch::from_spec(C::spec())
    }

    /// A watch of the dynamic kind `kind`, its objects as `DynamicObject`s.
    pub fn dynamic(kind: DynamicKind) -> Watch<DynamicObject> {
        Watch::from_spec(kind.spec())
    }
}

impl<T: Object> Watch<T> {
    fn from_spec(spec: CacheSpec<T>) -> Self {
        Self {
            name: spec.kind.clone(),
            spec,
            predicate: Box::new(Everything),
        }
    }

    /// Passes only the events that `predicate` lets through; with several, an event must pass
    /// all of them. See [`predicate`](crate::controller::predicate) for the built-in ones.
    pub fn predicate(mut self, predicate: impl Predicate<T>) -> Self {
        self.predicate = Box::new(and(self.predicate, predicate));
        self
    }

    /// Asks for the watched kind's cache to keep its objects in `storage` ([`Storage`]: typed
    /// or compact). The cache is the manager's one cache of the kind, shared by every watch of
    /// it: the storage holds for all of them, and a watch asking for another storage than the
    /// kind's settings ([`ByObject::storage`](crate::cache::ByObject::storage)) or than the
    /// cache it finds already made is refused with
    /// [`InvalidSettings`](crate::cache::Error::InvalidSettings). Typed kinds only: a
    /// metadata-only or dynamic watch stays typed.
    ///
    /// ```
    /// # use controller_runtime::cache::Storage;
    /// # use controller_runtime::controller::Watch;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// let pods = Watch::of::<Pod>().storage(Storage::compact());
    /// # let _ = pods;
    /// ```
    pub fn storage(mut self, storage: Storage) -> Self {
        self.spec.storage = Some(storage);
        self
    }

    /// The watch's name in logs and in the reports of handlers that did not sync (default: the
    /// kind).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The cache's description, the predicate (to be shared by the watch's handlers) and the
    /// name.
    pub(crate) fn into_parts(self) -> (CacheSpec<T>, Box<dyn Predicate<T>>, String) {
        (self.spec, self.predicate, self.name)
    }
}
