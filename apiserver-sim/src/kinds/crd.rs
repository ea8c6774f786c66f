//! CustomResourceDefinitions: validation, defaults, the served [`ResourceInfo`] derived
//! from a CRD, and the Established status.

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::pointer::{owned_strings, text as s};
use crate::machinery::resource_info::{GenerationRule, ResourceInfo, ScalePaths};
use crate::machinery::status::{Cause, invalid_value, required};

/// CRD-specific validation.
pub fn validate(crd: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let group = s(crd, "/spec/group");
    let plural = s(crd, "/spec/names/plural");
    let kind = s(crd, "/spec/names/kind");
    if group.is_empty() {
        out.push(required("spec.group", ""));
    }
    if plural.is_empty() {
        out.push(required("spec.names.plural", ""));
    }
    if kind.is_empty() {
        out.push(required("spec.names.kind", ""));
    }
    let name = meta::name(crd);
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        out.push(invalid_value(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    match s(crd, "/spec/scope") {
        "Namespaced" | "Cluster" => {}
        other => out.push(invalid_value(
            "spec.scope",
            other,
            "supported values: \"Cluster\", \"Namespaced\"",
        )),
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        out.push(required(
            "spec.versions",
            "must have exactly one version marked as storage version",
        ));
    } else {
        let storage = versions
            .iter()
            .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .count();
        if storage != 1 {
            let message = format!(
                "Invalid value: {}: must have exactly one version marked as storage version",
                internal_versions(&versions)
            );
            out.push(Cause::typed("spec.versions", &message));
        }
        for (i, v) in versions.iter().enumerate() {
            if v.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push(required(&format!("spec.versions[{i}].name"), ""));
            }
        }
    }
    out.extend(crate::kinds::printers::custom::validate(crd));
    // Without a storage version a new CRD gets no stored version either.
    let has_storage = versions
        .iter()
        .any(|v| v.get("storage").and_then(Value::as_bool) == Some(true));
    let stored = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| !v.is_empty());
    if !has_storage && !stored {
        let message = "Invalid value: null: must have at least one stored version";
        out.push(Cause::typed("status.storedVersions", message));
    }
    out
}

/// The versions as upstream prints them in a validation error: its internal type encoded by
/// Go (field names capitalized, every field present), where a schema, subresources, printer
/// columns or selectable fields shared by every version are hoisted out (so `null`).
/// Per-version ones are printed as given, which the internal type would print differently.
fn internal_versions(versions: &[Value]) -> String {
    let shared = |field: &str| {
        versions
            .windows(2)
            .all(|w| w[0].get(field) == w[1].get(field))
    };
    let hoisted: Vec<bool> = [
        "schema",
        "subresources",
        "additionalPrinterColumns",
        "selectableFields",
    ]
    .iter()
    .map(|f| shared(f))
    .collect();
    let json = |v: Option<&Value>| v.map_or_else(|| "null".to_string(), Value::to_string);
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            let flag = |f: &str| v.get(f).and_then(Value::as_bool).unwrap_or(false);
            let per_version = |i: usize, f: &str| {
                if hoisted[i] { "null".to_string() } else { json(v.get(f)) }
            };
            format!(
                "{{\"Name\":{},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{},\"Schema\":{},\"Subresources\":{},\"AdditionalPrinterColumns\":{},\"SelectableFields\":{}}}",
                json(Some(v.get("name").unwrap_or(&Value::String(String::new())))),
                flag("served"),
                flag("storage"),
                flag("deprecated"),
                json(v.get("deprecationWarning")),
                per_version(0, "schema"),
                per_version(1, "subresources"),
                per_version(2, "additionalPrinterColumns"),
                per_version(3, "selectableFields"),
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// Fills the upstream defaults of `spec`.
pub fn default_spec(crd: &mut Value) {
    let kind = s(crd, "/spec/names/kind").to_string();
    if let Some(names) = crd
        .pointer_mut("/spec/names")
        .and_then(Value::as_object_mut)
    {
        names
            .entry("singular")
            .or_insert_with(|| Value::String(kind.to_lowercase()));
        names
            .entry("listKind")
            .or_insert_with(|| Value::String(format!("{kind}List")));
    }
    if let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("conversion")
            .or_insert_with(|| json!({"strategy": "None"}));
    }
}

/// Whether the CRD's `Established` condition is true.
pub fn is_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Established")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// The CRD with `NamesAccepted` and `Established` conditions set.
pub fn established(crd: &Value) -> Value {
    let mut out = crd.clone();
    let now = meta::now_rfc3339();
    let storage: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .filter_map(|v| v.get("name").cloned())
                .collect()
        })
        .unwrap_or_default();
    let status = json!({
        "acceptedNames": crd.pointer("/spec/names").cloned().unwrap_or(json!({})),
        "storedVersions": storage,
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
    });
    if let Some(m) = out.as_object_mut() {
        m.insert("status".into(), status);
    }
    out
}

/// The resource a CRD serves (storage version first among served versions).
pub fn resource_info(crd: &Value) -> Option<ResourceInfo> {
    let group = s(crd, "/spec/group").to_string();
    let plural = s(crd, "/spec/names/plural").to_string();
    let kind = s(crd, "/spec/names/kind").to_string();
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return None;
    }
    let all = crd.pointer("/spec/versions").and_then(Value::as_array)?;
    let mut served: Vec<&Value> = all
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
        .collect();
    served.sort_by_key(|v| v.get("storage").and_then(Value::as_bool) != Some(true));
    let versions: Vec<String> = served
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    if versions.is_empty() {
        return None;
    }
    let status_subresource = served.iter().any(|v| {
        v.pointer("/subresources/status")
            .is_some_and(Value::is_object)
    });
    let scale = served
        .iter()
        .find_map(|v| v.pointer("/subresources/scale"))
        .map(|sc| ScalePaths {
            spec_replicas: s(sc, "/specReplicasPath").to_string(),
            status_replicas: s(sc, "/statusReplicasPath").to_string(),
            label_selector: sc
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
    let schemas = served
        .iter()
        .filter_map(|v| {
            Some((
                v.get("name")?.as_str()?.to_string(),
                v.pointer("/schema/openAPIV3Schema")?.clone(),
            ))
        })
        .collect();
    let printer_columns = served
        .iter()
        .filter_map(|v| {
            Some((
                v.get("name")?.as_str()?.to_string(),
                v.get("additionalPrinterColumns")?.clone(),
            ))
        })
        .collect();
    Some(ResourceInfo {
        group,
        versions,
        singular: crd
            .pointer("/spec/names/singular")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| kind.to_lowercase()),
        list_kind: crd
            .pointer("/spec/names/listKind")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{kind}List")),
        kind,
        plural,
        namespaced: s(crd, "/spec/scope") != "Cluster",
        short_names: owned_strings(crd, "/spec/names/shortNames"),
        categories: owned_strings(crd, "/spec/names/categories"),
        status_subresource,
        scale,
        generation: GenerationRule::AllButMetadata,
        builtin: false,
        delete_returns_object: false,
        schemas,
        verbs: crate::machinery::resource_info::CUSTOM_RESOURCE_VERBS,
        checks: Vec::new(),
        stored_with: None,
        conversion: None,
        printer_columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_info_and_validates_name() {
        let mut crd = json!({"metadata": {"name": "foos.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "foos", "kind": "Foo", "shortNames": ["fo"]},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false},
                {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}]}});
        assert!(validate(&crd).is_empty());
        default_spec(&mut crd);
        let info = resource_info(&crd).expect("info");
        assert_eq!(info.versions, vec!["v1", "v1beta1"]);
        assert!(info.status_subresource);
        assert_eq!(info.list_kind, "FooList");
        assert!(!is_established(&crd));
        assert!(is_established(&established(&crd)));
        crd["metadata"]["name"] = json!("bad");
        assert_eq!(validate(&crd).len(), 1);
    }
}
