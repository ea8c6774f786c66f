//! Metadata-only watches: [`owns_metadata`](ControllerBuilder::owns_metadata) and
//! [`watches_metadata`](ControllerBuilder::watches_metadata) (controller-runtime's
//! `builder.OnlyMetadata`, `WatchesMetadata`).
//!
//! An owned or watched type is often only mapped to the owner's key: its owner references and
//! labels are all the mapping reads. Watching it metadata-only keeps a cache of
//! [`PartialObjectMeta<C>`] (the objects' `ObjectMeta`, listed and watched as
//! `PartialObjectMetadata`) instead of the full objects: a Secret's data, a Pod's spec and
//! status are never transferred nor held in memory. The manager shares that cache: a reconciler
//! reads it through [`Cache::metadata_lister`](crate::Cache::metadata_lister) and
//! [`Cache::get_metadata`](crate::Cache::get_metadata). Predicates are typed over
//! `PartialObjectMeta<C>`: the built-in ones (labels, annotations, generation, label selector)
//! work unchanged, and [`predicate::from_fn`](crate::predicate::from_fn) sees the metadata.

use std::any::type_name;
use std::sync::Arc;

use indexer::ObjectKey;
use kube::core::PartialObjectMeta;

use crate::controller::builder::{ControllerBuilder, WatchFn};
use crate::controller::handlers::register_secondary;
use crate::controller::predicate::{Everything, Predicate, WatchFilter};
use crate::kind::Kind;
use crate::owner::controller_owner_key;

impl<K: Kind> ControllerBuilder<'_, K> {
    /// [`owns`](Self::owns) through a metadata-only watch of `C`: enqueues the owner named by
    /// each `C`'s controller owner reference, caching `C`'s metadata only.
    ///
    /// ```
    /// # use kube_rt_controller_runtime::{Controller, Manager};
    /// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # fn wire(manager: &Manager) {
    /// // A ConfigMap controller re-triggered by the Secrets it controls, without ever holding
    /// // a Secret's data in memory.
    /// let _ = Controller::new(manager)
    ///     .for_::<ConfigMap>()
    ///     .owns_metadata::<Secret>();
    /// # }
    /// ```
    pub fn owns_metadata<C: Kind>(self) -> Self {
        self.owns_metadata_with::<C>(Everything)
    }

    /// [`owns_metadata`](Self::owns_metadata), enqueueing only for the events of `C` that pass
    /// `predicate` (typed over `PartialObjectMeta<C>`).
    pub fn owns_metadata_with<C: Kind>(
        self,
        predicate: impl Predicate<PartialObjectMeta<C>>,
    ) -> Self {
        self.watches_metadata_with::<C, _, _>(
            |child: &PartialObjectMeta<C>| controller_owner_key::<K>(&child.metadata),
            predicate,
        )
    }

    /// [`watches`](Self::watches) through a metadata-only watch of `W`: `mapper` gets each
    /// changed object's metadata (labels, annotations, owner references, …).
    pub fn watches_metadata<W, I, F>(self, mapper: F) -> Self
    where
        W: Kind,
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&PartialObjectMeta<W>) -> I + Send + Sync + 'static,
    {
        self.watches_metadata_with::<W, I, F>(mapper, Everything)
    }

    /// [`watches_metadata`](Self::watches_metadata), mapping only the events of `W` that pass
    /// `predicate` (typed over `PartialObjectMeta<W>`).
    pub fn watches_metadata_with<W, I, F>(
        self,
        mapper: F,
        predicate: impl Predicate<PartialObjectMeta<W>>,
    ) -> Self
    where
        W: Kind,
        I: IntoIterator<Item = ObjectKey>,
        F: Fn(&PartialObjectMeta<W>) -> I + Send + Sync + 'static,
    {
        let own: Box<dyn Predicate<PartialObjectMeta<W>>> = Box::new(predicate);
        let register: WatchFn = Box::new(move |manager, intake, event_filters| {
            let filter = WatchFilter::new(Arc::clone(event_filters), own);
            register_secondary(&manager.metadata_informer::<W>(), intake, filter, mapper)
        });
        self.add_watch(type_name::<PartialObjectMeta<W>>().to_owned(), register)
    }
}
