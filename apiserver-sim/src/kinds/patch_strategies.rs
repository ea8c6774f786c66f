//! How the fields of built-in kinds merge in a strategic merge patch, as the Kubernetes
//! OpenAPI documents publish it: a field's `x-kubernetes-patch-strategy` (`merge`,
//! `retainKeys`, `replace`) and, for a merged list of objects, the
//! `x-kubernetes-patch-merge-key` its items are matched by.
//!
//! Read from `openapi/patch-strategies.json`, which `openapi/regenerate.py` extracts from
//! upstream's OpenAPI v3 documents: every kind and, of every schema, the fields that carry
//! those extensions or lead to a schema that does. The k8s-openapi schemas the simulator's
//! OpenAPI documents serve (`explain` feature) leave the extensions out; the documents add
//! them from here, so a client reads the same merge keys the server merges by.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::Deserialize;

/// The extracted metadata, as `openapi/regenerate.py` writes it.
#[derive(Debug, Default, Deserialize)]
struct Table {
    /// `apiVersion/Kind` to the kind's schema name.
    kinds: BTreeMap<String, String>,
    /// Schema name to its fields that matter to a merge.
    definitions: HashMap<String, Definition>,
}

/// The fields of one schema that matter to a strategic merge, by name (sorted, so walks are
/// in a stable order).
type Definition = BTreeMap<String, Field>;

/// One field of a schema.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Field {
    /// The schema of the value.
    #[serde(rename = "$ref")]
    reference: Option<String>,
    /// The schema of a list's items.
    items: Option<String>,
    /// The schema of a map's values.
    #[serde(rename = "additionalProperties")]
    values: Option<String>,
    /// `x-kubernetes-patch-strategy`: `merge`, `retainKeys`, `merge,retainKeys`, `replace`.
    #[serde(rename = "x-kubernetes-patch-strategy")]
    strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`.
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    merge_key: Option<String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = include_str!("../../openapi/patch-strategies.json");
        serde_json::from_str(text).unwrap_or_else(|e| {
            // Data compiled into the crate; its unit test fails first.
            tracing::error!(error = %e, "openapi/patch-strategies.json does not parse");
            Table::default()
        })
    })
}

/// The schema of a value a strategic merge walks into: an object of a known schema, or a
/// map whose values have one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// An object with these fields.
    Object(&'static Definition),
    /// A map (`additionalProperties`) whose values are objects with these fields.
    MapOf(&'static Definition),
}

impl Shape {
    /// The field `name` of this value (none in a map: its entries have no strategy) and the
    /// shape of the field's value (of its items, for a list).
    pub(crate) fn field(self, name: &str) -> (Option<&'static Field>, Option<Shape>) {
        match self {
            Shape::Object(def) => {
                let field = def.get(name);
                (field, field.and_then(Field::inner))
            }
            Shape::MapOf(def) => (None, Some(Shape::Object(def))),
        }
    }
}

fn definition(name: &str) -> Option<&'static Definition> {
    table().definitions.get(name)
}

impl Field {
    /// The shape of the value (of each item, for a list) when its schema matters to a merge.
    fn inner(&self) -> Option<Shape> {
        if let Some(items) = &self.items {
            return definition(items).map(Shape::Object);
        }
        if let Some(values) = &self.values {
            return definition(values).map(Shape::MapOf);
        }
        self.reference
            .as_deref()
            .and_then(definition)
            .map(Shape::Object)
    }

    fn has_strategy(&self, strategy: &str) -> bool {
        self.strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|p| p == strategy))
    }

    /// Whether the field (a list) merges with the patch's list instead of being replaced.
    pub(crate) fn merges(&self) -> bool {
        self.has_strategy("merge")
    }

    /// Whether the field (an object) is replaced by the patch's value instead of merged.
    pub(crate) fn replaces(&self) -> bool {
        self.has_strategy("replace")
    }

    /// The key a merged list's items are matched by (none for a list of scalars).
    pub(crate) fn merge_key(&self) -> Option<&str> {
        self.merge_key.as_deref().filter(|_| self.merges())
    }

    /// The field's patch extensions, as the OpenAPI documents publish them.
    pub(crate) fn extensions(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("x-kubernetes-patch-strategy", self.strategy.as_deref()),
            ("x-kubernetes-patch-merge-key", self.merge_key.as_deref()),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
    }
}

/// The shape of an object of `kind` in `group`/`version`: its own schema, else (a kind the
/// simulator serves in a version upstream's documents have only under another, such as a
/// newer GA version of a beta kind) the same kind's schema at the group's last other version
/// in name order (beta after alpha).
pub(crate) fn root(group: &str, version: &str, kind: &str) -> Option<Shape> {
    let kinds = &table().kinds;
    let api_version = |v: &str| {
        if group.is_empty() {
            v.to_string()
        } else {
            format!("{group}/{v}")
        }
    };
    let name = kinds
        .get(&format!("{}/{kind}", api_version(version)))
        .or_else(|| {
            let prefix = api_version("");
            kinds.iter().rev().find_map(|(gvk, name)| {
                let (av, k) = gvk.rsplit_once('/')?;
                let v = av.strip_prefix(&prefix)?;
                (k == kind && !v.contains('/')).then_some(name)
            })
        })?;
    definition(name).map(Shape::Object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_knows_every_served_builtin_kind() {
        assert!(table().kinds.len() > 100, "{} kinds", table().kinds.len());
        for row in super::super::builtin_types::typed_kinds() {
            assert!(
                root(row.group, row.version, row.kind).is_some(),
                "{}/{} {} has no patch metadata",
                row.group,
                row.version,
                row.kind
            );
        }
    }

    /// The field at `path` (dotted, `[*]` into list items) of `kind`.
    fn field_at(group: &str, kind: &str, path: &str) -> Option<&'static Field> {
        let mut shape = root(group, "v1", kind);
        let mut field = None;
        for step in path.split('.') {
            let (f, inner) = shape?.field(step.trim_end_matches("[*]"));
            (field, shape) = (f, inner);
        }
        field
    }

    #[test]
    fn merge_keys_are_the_schemas_not_the_field_names() {
        let key = |group, kind, path| field_at(group, kind, path).and_then(Field::merge_key);
        assert_eq!(key("", "Service", "spec.ports"), Some("port"));
        assert_eq!(
            key(
                "apps",
                "Deployment",
                "spec.template.spec.containers[*].ports"
            ),
            Some("containerPort")
        );
        assert_eq!(
            key(
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "webhooks"
            ),
            Some("name")
        );
        assert_eq!(key("", "Pod", "metadata.ownerReferences"), Some("uid"));
        // Tolerations have no merge key upstream: not merged.
        assert!(field_at("", "Pod", "spec.tolerations").is_none());
        // Finalizers merge as a set of strings, without a key.
        let finalizers = field_at("", "ConfigMap", "metadata.finalizers").expect("finalizers");
        assert!(finalizers.merges() && finalizers.merge_key().is_none());
        assert!(
            field_at("policy", "PodDisruptionBudget", "spec.selector").is_some_and(Field::replaces)
        );
    }

    #[test]
    fn a_beta_kinds_schema_serves_its_newer_ga_version() {
        assert!(root("certificates.k8s.io", "v1", "PodCertificateRequest").is_some());
        assert!(root("apps", "v1", "NoSuchKind").is_none());
    }
}
