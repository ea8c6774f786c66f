//! Controllers over dynamic kinds ([`DynamicKind`], watched as [`DynamicObject`]): a dynamic
//! primary kind ([`Controller::for_dynamic`], kube-runtime's `Controller::new_with`), and
//! dynamic owned and watched kinds on any controller.

use std::sync::Arc;

use indexer::ObjectKey;
use informer::Object;
use kube::api::DynamicObject;

use crate::controller::builder::{Controller, ControllerBuilder, WatchFn};
use crate::controller::handlers::register_secondary;
use crate::controller::predicate::{Everything, Predicate, WatchFilter};
use crate::controller::registered::Registered;
use crate::dynamic::DynamicKind;
use crate::manager::cache::KindKey;
use crate::manager::running::Manager;
use crate::owner::OwnerKind;

impl<'m> Controller<'m> {
    /// A controller whose primary kind is known only at run time: every create, update and
    /// delete of an object of `kind` enqueues a request for it, and the reconciler gets a
    /// [`Context<DynamicObject>`](crate::Context) ([`Context::get`](crate::Context::get) gives
    /// the [`DynamicObject`], [`Context::dynamic_api`](crate::Context::dynamic_api) an `Api` for
    /// it). The default name is the kind in lower case.
    pub fn for_dynamic(self, kind: DynamicKind) -> ControllerBuilder<'m, DynamicObject> {
        self.for_dynamic_with(kind, Everything)
    }

    /// [`for_dynamic`](Self::for_dynamic), enqueueing only the events that pass `predicate`.
    pub fn for_dynamic_with(
        self,
        kind: DynamicKind,
        predicate: impl Predicate<DynamicObject>,
    ) -> ControllerBuilder<'m, DynamicObject> {
        let owner = OwnerKind {
            kind: kind.resource.kind.clone(),
            group: kind.resource.group.clone(),
            namespaced: kind.namespaced,
        };
        let resource = kind.resource.clone();
        self.for_any(
            owner,
            resource,
            Box::new(move |manager: &Manager| {
                (
                    manager.shared.controller_dynamic_kind_cache(&kind),
                    KindKey::dynamic(&kind),
                )
            }),
            Box::new(predicate),
        )
    }
}

impl<K: Object> ControllerBuilder<'_, K> {
    /// Watches the dynamic kind `kind` and enqueues the owner named by each object's
    /// *controller* owner reference, if it is of the primary kind (as [`owns`](Self::owns)).
    pub fn owns_dynamic(self, kind: DynamicKind) -> Self {
        let owner = self.owner.clone();
        self.watches_dynamic_with(
            kind,
            move |child: &DynamicObject| owner.owner_key(&child.metadata),
            Everything,
        )
    }

    /// Watches the dynamic kind `kind` and enqueues the requests `mapper` returns for each
    /// changed object (as [`watches`](Self::watches)).
    pub fn watches_dynamic<I, F>(self, kind: DynamicKind, mapper: F) -> Self
    where
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&DynamicObject) -> I + Send + Sync + 'static,
    {
        self.watches_dynamic_with(kind, mapper, Everything)
    }

    /// [`watches_dynamic`](Self::watches_dynamic), mapping only the events that pass
    /// `predicate`.
    pub fn watches_dynamic_with<I, F>(
        mut self,
        kind: DynamicKind,
        mapper: F,
        predicate: impl Predicate<DynamicObject>,
    ) -> Self
    where
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&DynamicObject) -> I + Send + Sync + 'static,
    {
        let own: Box<dyn Predicate<DynamicObject>> = Box::new(predicate);
        let name = kind.describe();
        let register: WatchFn = Box::new(move |manager, intake, event_filters| {
            let filter = Arc::new(WatchFilter::new(Arc::clone(event_filters), own));
            let mapper = Arc::new(mapper);
            let cache = manager.shared.controller_dynamic_kind_cache(&kind);
            Registered::on(KindKey::dynamic(&kind), &cache, |informer| {
                register_secondary(informer, intake, Arc::clone(&filter), Arc::clone(&mapper))
            })
        });
        self.watches.push((name, register));
        self
    }
}
