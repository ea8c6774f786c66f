//! Field indexes (controller-runtime's `FieldIndexer` and `MatchingFields`): a user function
//! from an object to the values of one of its fields, kept as an informer index whose values
//! carry the object's namespace, so one index answers both "in any namespace" and "in this
//! namespace" queries.

use std::sync::Arc;

use indexer::IndexFn;
use informer::Object;

/// Prefix of the index values that answer queries across all namespaces. Not a valid
/// namespace name (underscores are not allowed in one), so it cannot collide with a namespace.
const ALL_NAMESPACES: &str = "__all_namespaces";

/// The informer index name under which the field index `field` is kept.
pub(crate) fn index_name(field: &str) -> String {
    format!("field:{field}")
}

/// The index value to look up for `value` in `namespace` (`None`: all namespaces).
pub(crate) fn lookup_value(namespace: Option<&str>, value: &str) -> String {
    format!("{}/{value}", namespace.unwrap_or(ALL_NAMESPACES))
}

/// Wraps the user's extractor into an informer index function: each value is stored once for
/// all-namespace queries and, for a namespaced object, once more under its namespace.
pub(crate) fn index_fn<K, F>(extract: F) -> IndexFn<K>
where
    K: Object,
    F: Fn(&K) -> Vec<String> + Send + Sync + 'static,
{
    Arc::new(move |obj: &K| {
        let values = extract(obj);
        let namespace = obj.meta().namespace.as_deref().filter(|ns| !ns.is_empty());
        let mut out = Vec::with_capacity(values.len() * 2);
        for value in values {
            out.push(lookup_value(None, &value));
            if namespace.is_some() {
                out.push(lookup_value(namespace, &value));
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::ObjectMeta;

    #[test]
    fn values_answer_both_scopes() {
        let index = index_fn(|cm: &ConfigMap| {
            cm.data
                .as_ref()
                .and_then(|data| data.get("ref").cloned())
                .into_iter()
                .collect()
        });
        let cm = ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("shop".into()),
                name: Some("a".into()),
                ..ObjectMeta::default()
            },
            data: Some([("ref".to_owned(), "settings".to_owned())].into()),
            ..ConfigMap::default()
        };
        assert_eq!(
            index(&cm),
            vec![
                lookup_value(None, "settings"),
                lookup_value(Some("shop"), "settings")
            ]
        );
        assert!(index(&ConfigMap::default()).is_empty());
    }
}
