//! [`Object`]: the one name for what the layers from the reflector up hold and pass around.

use std::fmt::Debug;

use kube::Resource;
use serde::de::DeserializeOwned;

/// A Kubernetes object that a reflector can decode, the caches can key, and every task can
/// share: `Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static`.
///
/// It is the bound of [`Reflector`](crate::Reflector), of `informer`'s shared informers and of
/// `controller-runtime`'s controllers, spelled once here and re-exported by the crates above.
/// Implemented for every type that qualifies: `k8s-openapi` types, `kube::CustomResource` types
/// and `DynamicObject`.
pub trait Object: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static {}

impl<K> Object for K where K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static {}
