//! The Kubernetes protobuf descriptors (`protos/kubernetes.fds`, generated from the
//! upstream `generated.proto` files by `protos/regenerate.sh`) and the message of each
//! served kind.

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// The descriptor set, decoded once (None if it does not decode, which a unit test rules
/// out).
static POOL: LazyLock<Option<DescriptorPool>> = LazyLock::new(|| {
    DescriptorPool::decode(include_bytes!("../../../protos/kubernetes.fds").as_slice()).ok()
});

/// Package of the apimachinery `meta/v1` messages.
pub const META_V1: &str = "apimachinery.pkg.apis.meta.v1";
/// Package of the apimachinery `runtime` messages.
pub const RUNTIME: &str = "apimachinery.pkg.runtime";

/// The protobuf package of an API group (without the version).
fn package(group: &str) -> String {
    match group {
        "" => "api.core".into(),
        "apiextensions.k8s.io" => "apiextensions_apiserver.pkg.apis.apiextensions".into(),
        "apiregistration.k8s.io" => "kube_aggregator.pkg.apis.apiregistration".into(),
        "internal.apiserver.k8s.io" => "api.apiserverinternal".into(),
        g => format!("api.{}", g.split('.').next().unwrap_or(g)),
    }
}

/// A message by its full name.
pub fn by_name(full_name: &str) -> Option<MessageDescriptor> {
    POOL.as_ref()?.get_message_by_name(full_name)
}

/// The message of a kind (or list kind) of an API group version; kinds of `meta/v1`
/// (`DeleteOptions`, `Status`, `PartialObjectMetadata`, ...) are found under any group.
pub fn message(group: &str, version: &str, kind: &str) -> Option<MessageDescriptor> {
    by_name(&format!("{}.{version}.{kind}", package(group)))
        .or_else(|| by_name(&format!("{META_V1}.{kind}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_decode_and_name_served_kinds() {
        assert!(POOL.is_some());
        for info in crate::kinds::builtins::builtins() {
            let v = info.storage_version();
            let found = message(&info.group, v, &info.kind).is_some()
                && message(&info.group, v, &info.list_kind).is_some();
            // Kinds newer than the descriptors (GA after their Kubernetes version) may lack one.
            if !found {
                eprintln!("no protobuf message for {}/{v} {}", info.group, info.kind);
            }
        }
        for (g, v, k) in [
            ("", "v1", "Pod"),
            ("apps", "v1", "Deployment"),
            ("autoscaling", "v2", "HorizontalPodAutoscaler"),
            ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            ("events.k8s.io", "v1", "Event"),
            ("", "v1", "DeleteOptions"),
        ] {
            assert!(message(g, v, k).is_some(), "{g}/{v} {k}");
        }
    }
}
