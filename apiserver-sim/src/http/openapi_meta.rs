//! The meta types a custom resource's OpenAPI v3 document refers to, as upstream publishes them
//! beside the resource's own schemas: `ObjectMeta` (its objects' `metadata`), `ListMeta` (its
//! lists'), `Status`, `DeleteOptions` and `Patch` (what its operations answer and take), and
//! `Scale` for a resource with a scale subresource — each with the schemas it refers to. From
//! k8s-openapi's types with the `explain` feature; none without it.

use std::sync::OnceLock;

use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, ListMeta, ObjectMeta, Patch, Status,
};
use serde_json::{Map, Value, json};

use crate::kinds::builtin_schemas::Described;

/// The schema name of `ObjectMeta`.
pub(super) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// The schema name of `ListMeta`.
pub(super) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// The schema name of `ShardInfo`, which kube-apiserver 1.36 adds to `ListMeta` and
/// k8s-openapi does not know yet.
const SHARD_INFO: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo";

/// The meta schemas, by name: those every custom resource refers to, and with `Scale` too.
struct MetaSchemas {
    common: Map<String, Value>,
    with_scale: Map<String, Value>,
}

fn add<T: Described>(into: &mut Map<String, Value>) {
    if let Some((_, definitions)) = T::definitions() {
        into.extend(definitions);
    }
}

fn all() -> &'static MetaSchemas {
    static ALL: OnceLock<MetaSchemas> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut common = Map::new();
        add::<ObjectMeta>(&mut common);
        add::<ListMeta>(&mut common);
        add::<Status>(&mut common);
        add::<DeleteOptions>(&mut common);
        add::<Patch>(&mut common);
        if let Some(Value::Object(list_meta)) = common.get_mut(LIST_META) {
            add_shard_info(list_meta);
            common.insert(SHARD_INFO.into(), shard_info());
        }
        let mut with_scale = common.clone();
        add::<Scale>(&mut with_scale);
        MetaSchemas { common, with_scale }
    })
}

/// `ListMeta.shardInfo`, a reference to [`shard_info`].
fn add_shard_info(list_meta: &mut Map<String, Value>) {
    if let Some(Value::Object(properties)) = list_meta.get_mut("properties") {
        properties.insert(
            "shardInfo".into(),
            json!({
                "description": "Set on a list that holds only the objects of one shard (a shard \
                    selector was given): which shard.",
                "allOf": [{"$ref": format!("#/components/schemas/{SHARD_INFO}")}],
            }),
        );
    }
}

/// `ShardInfo`: the shard selector a list was filtered by.
fn shard_info() -> Value {
    json!({
        "description": "The shard a list response was filtered to; its presence means the list is \
            a subset of the collection.",
        "type": "object",
        "required": ["selector"],
        "properties": {
            "selector": {
                "description": "The shard selector of the request, returned as given.",
                "type": "string",
                "default": "",
            },
        },
    })
}

/// The meta schemas a custom resource's document holds (`Scale`'s with `scale`); empty without
/// the `explain` feature.
pub(super) fn meta_schemas(scale: bool) -> &'static Map<String, Value> {
    let all = all();
    if scale { &all.with_scale } else { &all.common }
}

#[cfg(all(test, feature = "explain"))]
mod tests {
    use super::*;

    #[test]
    fn publishes_the_meta_types_and_what_they_refer_to() {
        let names: Vec<&String> = meta_schemas(true).keys().collect();
        for name in [
            OBJECT_META,
            LIST_META,
            SHARD_INFO,
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
            "io.k8s.api.autoscaling.v1.Scale",
        ] {
            assert!(names.iter().any(|n| *n == name), "{name} in {names:?}");
        }
        assert!(!meta_schemas(false).contains_key("io.k8s.api.autoscaling.v1.Scale"));
        assert!(meta_schemas(false)[LIST_META]["properties"]["shardInfo"].is_object());
    }
}
