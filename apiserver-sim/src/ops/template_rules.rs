//! Validation of what templates and updates of workload kinds may hold, beyond the shared
//! checks of `validate.rs`: the object metadata inside a template (an ephemeral volume's claim
//! template, a ResourceClaimTemplate's claim) cannot carry owner references, a StatefulSet's
//! spec changes only in the fields upstream lets change, a Job's template only as
//! `job_update.rs` says, and a CSINode's existing drivers not at all.

use serde_json::Value;

use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::Cause;

/// Where the pod spec of an object of `info`'s kind lies: JSON pointer and field path.
fn pod_spec_at(info: &ResourceInfo) -> Option<(&'static str, &'static str)> {
    Some(match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => ("/spec", "spec"),
        ("", "PodTemplate") => ("/template/spec", "template.spec"),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => ("/spec/template/spec", "spec.template.spec"),
        ("batch", "CronJob") => (
            "/spec/jobTemplate/spec/template/spec",
            "spec.jobTemplate.spec.template.spec",
        ),
        _ => return None,
    })
}

fn has_owner_refs(meta: Option<&Value>) -> bool {
    meta.and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// Owner references set in a template's object metadata: `Forbidden: cannot be set`.
pub(super) fn template_metadata(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    let forbidden = |field: String| Cause::typed(&field, "Forbidden: cannot be set");
    if info.group == "resource.k8s.io" && info.kind == "ResourceClaimTemplate" {
        return has_owner_refs(obj.pointer("/spec/metadata"))
            .then(|| forbidden("spec.metadata.ownerReferences".into()))
            .into_iter()
            .collect();
    }
    let Some((ptr, path)) = pod_spec_at(info) else {
        return Vec::new();
    };
    let volumes = obj
        .pointer(&format!("{ptr}/volumes"))
        .and_then(Value::as_array);
    volumes
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| has_owner_refs(v.pointer("/ephemeral/volumeClaimTemplate/metadata")))
        .map(|(i, _)| {
            forbidden(format!(
                "{path}.volumes[{i}].ephemeral.volumeClaimTemplate.metadata.ownerReferences"
            ))
        })
        .collect()
}

/// A CSINode's existing drivers cannot change but for their allocatable count
/// (`ValidateCSINodeUpdate`): each changed one is refused, printed as Go prints the
/// internal driver (its count left out).
fn csi_node_drivers(old: &Value, new: &Value) -> Vec<Cause> {
    let drivers = |o: &Value| -> Vec<Value> {
        o.pointer("/spec/drivers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|mut d| {
                if let Some(m) = d.as_object_mut() {
                    m.remove("allocatable");
                }
                d
            })
            .collect()
    };
    let new_drivers = drivers(new);
    let mut causes = Vec::new();
    for o in drivers(old) {
        for n in new_drivers
            .iter()
            .filter(|n| n.get("name") == o.get("name"))
        {
            if *n != o {
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {}: field is immutable",
                        crate::machinery::go_struct::dump("CSINodeDriver", n)
                    ),
                    field: "spec.drivers".into(),
                });
            }
        }
    }
    causes
}

/// The fields of a StatefulSet's spec an update may change.
const STATEFUL_SET_MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// What an update of an object of `info`'s kind may not change (from `old` to `new`).
pub(super) fn update(info: &ResourceInfo, old: &Value, new: &Value) -> Vec<Cause> {
    if info.group == "batch" && info.kind == "Job" {
        return super::job_update::template(old, new);
    }
    if info.group == "storage.k8s.io" && info.kind == "CSINode" {
        return csi_node_drivers(old, new);
    }
    if !(info.group == "apps" && info.kind == "StatefulSet") {
        return Vec::new();
    }
    let fixed = |obj: &Value| {
        let mut spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(m) = spec.as_object_mut() {
            m.retain(|k, _| !STATEFUL_SET_MUTABLE.contains(&k.as_str()));
        }
        spec
    };
    if fixed(old) == fixed(new) {
        return Vec::new();
    }
    vec![Cause::typed(
        "spec",
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', \
         'template', 'updateStrategy', 'revisionHistoryLimit', \
         'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    )]
}
