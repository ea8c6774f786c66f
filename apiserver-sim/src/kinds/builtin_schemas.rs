//! The OpenAPI v3 schemas of the built-in kinds, read from their k8s-openapi types: with the
//! `explain` feature, which turns on k8s-openapi's `schemars` implementations (their field
//! descriptions are the Kubernetes API reference's), every served kind's schema and the
//! schemas it refers to; without it, none, and `kubectl explain` finds no built-in kind.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::builtin_types::typed_kinds;

/// A type's OpenAPI schema name and the schema definitions it needs: its own and every
/// schema it refers to (`#/components/schemas/<name>`), by name.
pub(crate) type Definitions = Option<(String, Map<String, Value>)>;

/// A type whose OpenAPI schema definitions may be known.
pub(crate) trait Described {
    /// The type's schema name and definitions; `None` without the `explain` feature.
    fn definitions() -> Definitions;
}

#[cfg(feature = "explain")]
impl<T: schemars::JsonSchema> Described for T {
    fn definitions() -> Definitions {
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        generator.subschema_for::<T>();
        Some((
            T::schema_name().into_owned(),
            generator.take_definitions(true),
        ))
    }
}

#[cfg(not(feature = "explain"))]
impl<T> Described for T {
    fn definitions() -> Definitions {
        None
    }
}

/// The component schemas of the built-in kinds of each (group, version), each kind's own
/// schema marked with the `x-kubernetes-group-version-kind` kubectl looks kinds up by.
/// Generated once, on first use.
fn all() -> &'static HashMap<(String, String), Map<String, Value>> {
    static ALL: OnceLock<HashMap<(String, String), Map<String, Value>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: HashMap<(String, String), Map<String, Value>> = HashMap::new();
        for row in typed_kinds() {
            let Some((name, definitions)) = (row.definitions)() else {
                continue;
            };
            let schemas = all
                .entry((row.group.to_owned(), row.version.to_owned()))
                .or_default();
            schemas.extend(definitions);
            if let Some(Value::Object(schema)) = schemas.get_mut(&name) {
                schema.insert(
                    "x-kubernetes-group-version-kind".into(),
                    json!([{"group": row.group, "version": row.version, "kind": row.kind}]),
                );
            }
        }
        all
    })
}

/// The component schemas of the built-in kinds of `group`/`version` (empty without the
/// `explain` feature or for a group version with no built-in kind).
pub(crate) fn builtin_schemas(group: &str, version: &str) -> Option<&'static Map<String, Value>> {
    all().get(&(group.to_owned(), version.to_owned()))
}

#[cfg(all(test, feature = "explain"))]
mod tests {
    use super::*;

    #[test]
    fn a_kind_and_what_it_refers_to_are_published_under_upstream_names() {
        let apps = builtin_schemas("apps", "v1").expect("apps/v1 schemas");
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
        let core = builtin_schemas("", "v1").expect("core/v1 schemas");
        assert!(core.contains_key("io.k8s.api.core.v1.Pod"));
        assert!(builtin_schemas("apps", "v1beta1").is_none());
    }
}
