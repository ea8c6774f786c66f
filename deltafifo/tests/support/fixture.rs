//! [`Fixture`]: the test objects in either storage mode, so that every suite runs on typed
//! objects (`ConfigMap`) and on compact ones (`Compact<ConfigMap>`).

use std::fmt::Debug;

use indexer::compact::Compact;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;

/// An object type the suites run on, made from a typed `ConfigMap`.
pub trait Fixture: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static {
    /// `obj` in this representation.
    fn from_typed(obj: ConfigMap) -> Self;
}

impl Fixture for ConfigMap {
    fn from_typed(obj: ConfigMap) -> Self {
        obj
    }
}

impl Fixture for Compact<ConfigMap> {
    /// The object as a reflector would receive it: its wire JSON, captured compact.
    fn from_typed(obj: ConfigMap) -> Self {
        let json = serde_json::to_string(&obj).expect("a ConfigMap serializes");
        serde_json::from_str(&json).expect("a ConfigMap's JSON is a compact ConfigMap")
    }
}
