//! Namespace controller: empties a terminating namespace (honouring finalizers), then
//! removes it. While content held by finalizers remains, the namespace's conditions say so as
//! upstream's namespace deleter words them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::writes;
use crate::machinery::meta;
use crate::machinery::resource_info::GroupResource;
use crate::store::{ObjKey, State};

pub(super) fn reconcile(st: &mut State) -> bool {
    let ns_key = GroupResource::new("", "namespaces");
    let Some(rs) = st.resource(&ns_key) else {
        return false;
    };
    let terminating: Vec<_> = rs
        .objects
        .iter()
        .filter(|(_, v)| meta::is_deleting(&v.obj))
        .map(|(k, v)| (k.clone(), meta::finalizers(&v.obj).is_empty()))
        .collect();
    let mut changed = false;
    for (okey, no_finalizers) in terminating {
        let ns = okey.1.clone();
        let mut content = Vec::new();
        for (gr, r) in &st.resources {
            if !r.info.namespaced {
                continue;
            }
            for k in r.objects.keys().filter(|k| k.0 == ns) {
                content.push((gr.clone(), k.clone()));
            }
        }
        if content.is_empty() {
            if no_finalizers {
                st.remove(&ns_key, &okey);
                changed = true;
            }
            continue;
        }
        let mut deleted = false;
        for (gr, k) in &content {
            deleted |= writes::delete_background(st, gr, k);
        }
        changed |= deleted || remaining(st, &ns_key, &okey, &content);
    }
    changed
}

/// Records in the namespace's conditions what content remains, all of it being deleted and
/// held by finalizers; true if the namespace changed.
fn remaining(
    st: &mut State,
    ns_key: &GroupResource,
    okey: &ObjKey,
    content: &[(GroupResource, ObjKey)],
) -> bool {
    let mut per_resource: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_finalizer: BTreeMap<String, usize> = BTreeMap::new();
    for (gr, k) in content {
        let Some(obj) = st.get(gr, k) else { continue };
        *per_resource
            .entry(format!("{}.{}", gr.resource, gr.group))
            .or_default() += 1;
        for f in meta::finalizers(&obj) {
            *per_finalizer.entry(f).or_default() += 1;
        }
    }
    let list = |m: &BTreeMap<String, usize>, sep: &str| {
        m.iter()
            .map(|(k, n)| format!("{k}{sep}{n} resource instances"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let conditions = [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".to_string(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".to_string(),
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_string(),
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            format!(
                "Some resources are remaining: {}",
                list(&per_resource, " has ")
            ),
        ),
        (
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                list(&per_finalizer, " in ")
            ),
        ),
    ];
    let Some(ns) = st.get(ns_key, okey) else {
        return false;
    };
    let old = ns.pointer("/status/conditions").and_then(Value::as_array);
    let now = meta::now_rfc3339();
    let same = |c: &Value, t: &str, s: &str, r: &str, m: &str| {
        c["type"] == t && c["status"] == s && c["reason"] == r && c["message"] == m
    };
    let new: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r, m)| {
            let kept = old.into_iter().flatten().find(|c| same(c, t, s, r, m));
            kept.cloned().unwrap_or_else(|| {
                json!({"type": t, "status": s, "lastTransitionTime": now, "reason": r, "message": m})
            })
        })
        .collect();
    if old.is_some_and(|o| *o == new) {
        return false;
    }
    let mut ns = (*ns).clone();
    ns["status"]["conditions"] = Value::Array(new);
    st.put(ns_key, ns);
    true
}
