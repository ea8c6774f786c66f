//! The built-in resource types served from startup, as [`ResourceInfo`]: one per
//! (group, plural) of [`typed_kinds`], its served versions merged (preferred first), its
//! traits from [`traits`], and the conversions of the resources whose versions or groups
//! differ in more than `apiVersion` (events.k8s.io events are core events; autoscaling/v1
//! horizontal pod autoscalers are autoscaling/v2 ones).

use std::sync::Arc;

use super::builtin_traits::traits;
use super::builtin_types::{TypedKind, typed_kinds};
use crate::machinery::resource_info::{GenerationRule, GroupResource, ResourceInfo, ScalePaths};

/// The ResourceInfo of the kinds of one (group, plural), versions in preference order.
fn info(rows: &[TypedKind]) -> Option<ResourceInfo> {
    let first = rows.first()?;
    let tr = traits(first.group, first.plural);
    let has_status = first.has_field("status");
    let generation = tr
        .generation
        .unwrap_or(if first.has_field("spec") && has_status {
            GenerationRule::Spec
        } else {
            GenerationRule::None
        });
    let mut info = ResourceInfo {
        group: first.group.into(),
        versions: rows.iter().map(|r| r.version.to_string()).collect(),
        plural: first.plural.into(),
        singular: first.kind.to_lowercase(),
        kind: first.kind.into(),
        list_kind: first.list_kind.into(),
        namespaced: first.namespaced,
        short_names: tr.short.iter().map(|s| s.to_string()).collect(),
        categories: tr.categories.iter().map(|s| s.to_string()).collect(),
        status_subresource: has_status,
        scale: tr.scale.then(|| ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".spec.selector".into()),
        }),
        generation,
        builtin: true,
        delete_returns_object: tr.delete_returns_object,
        schemas: Vec::new(),
        printer_columns: Vec::new(),
        verbs: tr.verbs,
        checks: rows
            .iter()
            .map(|r| (r.version.to_string(), r.check))
            .collect(),
        stored_with: None,
        conversion: None,
    };
    match (first.group, first.plural) {
        ("events.k8s.io", "events") => {
            info.stored_with = Some(GroupResource::new("", "events"));
            info.conversion = Some(super::event_conversion::CONVERSION);
        }
        ("autoscaling", "horizontalpodautoscalers") => {
            info.conversion = Some(super::hpa_conversion::CONVERSION);
        }
        _ => {}
    }
    Some(info)
}

/// The built-in resource types served from startup.
pub fn builtins() -> Vec<Arc<ResourceInfo>> {
    let mut groups: Vec<Vec<TypedKind>> = Vec::new();
    for row in typed_kinds() {
        match groups
            .iter_mut()
            .find(|g| g[0].group == row.group && g[0].plural == row.plural)
        {
            Some(g) => g.push(row),
            None => groups.push(vec![row]),
        }
    }
    groups
        .iter()
        .filter_map(|rows| info(rows))
        .map(Arc::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(group: &str, plural: &str) -> Arc<ResourceInfo> {
        builtins()
            .into_iter()
            .find(|i| i.group == group && i.plural == plural)
            .unwrap_or_else(|| panic!("{group}/{plural} served"))
    }

    #[test]
    fn rows_come_from_the_types() {
        let sts = find("apps", "statefulsets");
        assert_eq!(
            (sts.kind.as_str(), sts.list_kind.as_str()),
            ("StatefulSet", "StatefulSetList")
        );
        assert!(sts.namespaced && sts.status_subresource && sts.scale.is_some());
        assert_eq!(sts.generation, GenerationRule::Spec);
        let node = find("", "nodes");
        assert!(!node.namespaced && node.status_subresource);
        assert_eq!(node.short_names, vec!["no"]);
        let hpa = find("autoscaling", "horizontalpodautoscalers");
        assert_eq!(hpa.versions, vec!["v2", "v1"]);
        let cm = find("", "configmaps");
        assert!(!cm.status_subresource && cm.generation == GenerationRule::None);
        assert!(!find("", "namespaces").has_verb("deletecollection"));
        for plural in [
            "validatingwebhookconfigurations",
            "mutatingwebhookconfigurations",
        ] {
            let rows = builtins()
                .into_iter()
                .filter(|i| i.group == "admissionregistration.k8s.io" && i.plural == plural)
                .count();
            assert_eq!(rows, 1, "one row serves {plural}");
            let info = find("admissionregistration.k8s.io", plural);
            assert_eq!(info.generation, GenerationRule::AllButMetadata);
            assert!(crate::kinds::webhook_configuration::is_webhook_configuration(&info));
        }
        assert!(
            !crate::kinds::webhook_configuration::is_webhook_configuration(&find(
                "admissionregistration.k8s.io",
                "validatingadmissionpolicies"
            ))
        );
        assert_eq!(
            find("events.k8s.io", "events").key(),
            GroupResource::new("", "events")
        );
    }
}
