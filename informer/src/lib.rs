//! Work in progress: see issue 7.
#![deny(missing_docs)]

mod controller;
mod error;
mod handler;
mod listener;
mod processor;
mod registration;
mod resync;
mod shared_informer;
mod transform;
mod wait;

pub use error::Error;
pub use reflector::{ApiListerWatcher, ListerWatcher, ReflectorOptions};
pub use shared_informer::{InformerBuilder, SharedIndexInformer};

/// What an informer can hold: a Kubernetes object that can be keyed, decoded and shared across
/// tasks. Implemented for every type that qualifies (`k8s-openapi` types, `kube::CustomResource`
/// types and `DynamicObject`).
pub trait Object:
    kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
}

impl<K> Object for K where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}
pub use handler::{
    DeletedFinalStateUnknown, DeletedObject, FilteringHandler, HandlerFuncs, ResourceEventHandler,
    handler,
};
pub use processor::ListenerBuffer;
pub use registration::Registration;
pub use resync::MIN_RESYNC_PERIOD;
pub use transform::{TransformFn, strip_managed_fields};
pub use wait::{CacheSynced, wait_for_cache_sync};
#[cfg(test)]
mod testing;
