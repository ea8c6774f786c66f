//! The `components.schemas` of an `/openapi/v3/<group>/<version>` document for custom
//! resources: each CRD version's structural schema under the name kube-apiserver gives it
//! (the group reversed, then version and kind: `io.k8s.samplecontroller.v1alpha1.Foo`), with
//! `apiVersion`, `kind` and `metadata` added and the `x-kubernetes-group-version-kind` that
//! `kubectl explain` looks kinds up by; and its list kind. And the schemas of the built-in
//! kinds, from their types (`kinds/builtin_schemas.rs`), marked the same way.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::kinds::builtin_types::typed_kinds;
use crate::kinds::patch_strategies::{self, Shape};
use crate::machinery::resource_info::ResourceInfo;

/// The schema name of `kind` in `group`/`version`: the group's labels reversed, then the
/// version and the kind.
fn schema_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The type-meta and metadata properties every object's schema starts with: `metadata` refers
/// to `meta` (`ObjectMeta` or `ListMeta`) when its schema is published, else is described.
fn object_properties(kind: &str, meta: &str) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "apiVersion".into(),
        json!({"type": "string", "description": "The versioned schema of this object: \
               group/version. Servers convert what they receive to their stored version."}),
    );
    properties.insert(
        "kind".into(),
        json!({"type": "string", "description": format!("The REST resource this object \
               represents: {kind}. Not settable by clients.")}),
    );
    let metadata = if super::openapi_meta::meta_schemas(false).contains_key(meta) {
        json!({"description": "The object's metadata.",
               "allOf": [{"$ref": format!("#/components/schemas/{meta}")}]})
    } else {
        json!({"type": "object", "description": "The object's metadata: name, namespace, \
               labels, annotations, owner references, finalizers and the fields the server \
               sets."})
    };
    properties.insert("metadata".into(), metadata);
    properties
}

/// The schemas of `info` (a custom resource) at `version`, by name, with the meta types they
/// refer to; none for built-in kinds or a version without a schema.
pub(super) fn custom_resource_schemas(info: &ResourceInfo, version: &str) -> Vec<(String, Value)> {
    if info.builtin {
        return Vec::new();
    }
    let Some(schema) = info.schema(version) else {
        return Vec::new();
    };
    let group = &info.group;
    let name = schema_name(group, version, &info.kind);
    let mut object = schema.as_object().cloned().unwrap_or_default();
    let mut properties = object_properties(&info.kind, super::openapi_meta::OBJECT_META);
    if let Some(own) = object.get("properties").and_then(Value::as_object) {
        for (field, field_schema) in own {
            if !matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
                properties.insert(field.clone(), field_schema.clone());
            }
        }
    }
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), Value::Object(properties));
    object.insert(
        "x-kubernetes-group-version-kind".into(),
        json!([{"group": group, "version": version, "kind": info.kind}]),
    );
    let mut list_properties = object_properties(&info.list_kind, super::openapi_meta::LIST_META);
    list_properties.insert(
        "items".into(),
        json!({"type": "array", "description": format!("The {} objects of the list.", info.kind),
               "items": {"$ref": format!("#/components/schemas/{name}")}}),
    );
    let list = json!({
        "type": "object",
        "description": format!("A list of {}.", info.kind),
        "required": ["items"],
        "properties": list_properties,
        "x-kubernetes-group-version-kind":
            [{"group": group, "version": version, "kind": info.list_kind}],
    });
    let mut schemas = vec![
        (name, Value::Object(object)),
        (schema_name(group, version, &info.list_kind), list),
    ];
    schemas.extend(
        super::openapi_meta::meta_schemas(info.scale.is_some())
            .iter()
            .map(|(name, schema)| (name.clone(), schema.clone())),
    );
    schemas
}

/// The schema name a field's value, items or map values refer to.
fn referred(field: &Value) -> Option<&str> {
    fn reference(v: &Value) -> Option<&str> {
        v.get("$ref")
            .or_else(|| v.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
    }
    reference(field)
        .or_else(|| field.get("items").and_then(reference))
        .or_else(|| field.get("additionalProperties").and_then(reference))
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
}

/// Marks the fields of schema `name` (and of the schemas it refers to) with the patch
/// extensions upstream's documents give them (`x-kubernetes-patch-strategy`,
/// `x-kubernetes-patch-merge-key`), from `shape`, the strategic merge's view of the same
/// type: the extensions a client reads are the ones the server merges by.
fn add_patch_extensions(
    schemas: &mut Map<String, Value>,
    name: &str,
    shape: Shape,
    seen: &mut HashSet<String>,
) {
    if !seen.insert(name.to_string()) {
        return;
    }
    let Some(Value::Object(fields)) = schemas.get_mut(name).and_then(|s| s.get_mut("properties"))
    else {
        return;
    };
    let mut inner_schemas = Vec::new();
    for (field_name, field) in fields.iter_mut() {
        let (strategy, inner) = shape.field(field_name);
        if let (Some(strategy), Value::Object(field)) = (strategy, &mut *field) {
            for (k, v) in strategy.extensions() {
                field.insert(k.into(), json!(v));
            }
        }
        // The walk goes to the values of a map directly.
        let inner = match inner {
            Some(Shape::MapOf(values)) => Some(Shape::Object(values)),
            other => other,
        };
        if let (Some(inner), Some(target)) = (inner, referred(field)) {
            inner_schemas.push((target.to_string(), inner));
        }
    }
    for (target, inner) in inner_schemas {
        add_patch_extensions(schemas, &target, inner, seen);
    }
}

/// The built-in kinds' component schemas of one group version, and a hash of them for the
/// documents' `serverRelativeURL`s.
#[derive(Debug, Default)]
pub(super) struct BuiltinSchemas {
    /// The schemas, by name.
    pub schemas: Map<String, Value>,
    /// A hash of `schemas`, stable for the life of the process.
    pub hash: u64,
}

/// The built-in kinds' component schemas of each (group, version), each kind's own schema
/// marked with the `x-kubernetes-group-version-kind` kubectl looks kinds up by. Generated
/// once, on first use.
fn all() -> &'static HashMap<(String, String), BuiltinSchemas> {
    static ALL: OnceLock<HashMap<(String, String), BuiltinSchemas>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: HashMap<(String, String), BuiltinSchemas> = HashMap::new();
        for row in typed_kinds() {
            let Some((name, definitions)) = (row.definitions)() else {
                continue;
            };
            let schemas = &mut all
                .entry((row.group.to_owned(), row.version.to_owned()))
                .or_default()
                .schemas;
            schemas.extend(definitions);
            if let Some(Value::Object(schema)) = schemas.get_mut(&name) {
                schema.insert(
                    "x-kubernetes-group-version-kind".into(),
                    json!([{"group": row.group, "version": row.version, "kind": row.kind}]),
                );
            }
            if let Some(shape) = patch_strategies::root(row.group, row.version, row.kind) {
                add_patch_extensions(schemas, &name, shape, &mut HashSet::new());
            }
        }
        for built_in in all.values_mut() {
            let mut hasher = DefaultHasher::new();
            Value::Object(built_in.schemas.clone())
                .to_string()
                .hash(&mut hasher);
            built_in.hash = hasher.finish();
        }
        all
    })
}

/// The built-in kinds' component schemas of `group`/`version` (`None` without the `explain`
/// feature or for a group version with no built-in kind).
pub(super) fn builtin_schemas(group: &str, version: &str) -> Option<&'static BuiltinSchemas> {
    all().get(&(group.to_owned(), version.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_reverse_the_group() {
        assert_eq!(
            schema_name("samplecontroller.k8s.io", "v1alpha1", "Foo"),
            "io.k8s.samplecontroller.v1alpha1.Foo"
        );
        assert_eq!(
            schema_name("example.com", "v1", "Widget"),
            "com.example.v1.Widget"
        );
    }

    #[cfg(feature = "explain")]
    #[test]
    fn a_kind_and_what_it_refers_to_are_published_under_upstream_names() {
        let apps = &builtin_schemas("apps", "v1")
            .expect("apps/v1 schemas")
            .schemas;
        let deployment = &apps["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
        );
        assert!(
            deployment["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
        assert!(apps.contains_key("io.k8s.api.apps.v1.DeploymentSpec"));
        assert!(apps.contains_key("io.k8s.api.core.v1.PodTemplateSpec"));
        assert!(apps.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        // A referenced type is not itself a kind of the group version.
        assert!(
            apps["io.k8s.api.apps.v1.DeploymentSpec"]
                .get("x-kubernetes-group-version-kind")
                .is_none()
        );
        let core = &builtin_schemas("", "v1").expect("core/v1 schemas").schemas;
        assert!(core.contains_key("io.k8s.api.core.v1.Pod"));
        assert!(builtin_schemas("apps", "v1beta1").is_none());
    }

    #[cfg(feature = "explain")]
    #[test]
    fn built_in_schemas_carry_the_patch_strategies_the_server_merges_by() {
        let schemas = |g: &str, v: &str| &builtin_schemas(g, v).expect("schemas").schemas;
        let field = |s: &'static Map<String, Value>, name: &str, field: &str| {
            s[name]["properties"][field].clone()
        };
        let pod_spec = field(
            schemas("", "v1"),
            "io.k8s.api.core.v1.PodSpec",
            "containers",
        );
        assert_eq!(pod_spec["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(pod_spec["x-kubernetes-patch-strategy"], "merge");
        let ports = field(schemas("", "v1"), "io.k8s.api.core.v1.ServiceSpec", "ports");
        assert_eq!(ports["x-kubernetes-patch-merge-key"], "port");
        let webhooks = field(
            schemas("admissionregistration.k8s.io", "v1"),
            "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
            "webhooks",
        );
        assert_eq!(webhooks["x-kubernetes-patch-merge-key"], "name");
        let tolerations = field(
            schemas("", "v1"),
            "io.k8s.api.core.v1.PodSpec",
            "tolerations",
        );
        assert!(tolerations.get("x-kubernetes-patch-merge-key").is_none());
    }
}
