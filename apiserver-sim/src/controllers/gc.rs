//! Garbage collector: deletes dependents whose owners (by uid) are all gone, drops
//! dangling owner references from dependents that still have a live owner, and carries
//! out foreground and orphan deletion of owners.
//!
//! Foreground deletion is recursive, as upstream: the dependents of an owner being deleted in
//! the foreground are themselves deleted in the foreground, and an owner keeps its
//! `foregroundDeletion` finalizer only while a dependent that references it with
//! `blockOwnerDeletion: true` exists.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::writes;
use crate::machinery::meta;
use crate::machinery::resource_info::GroupResource;
use crate::ops::{FOREGROUND, ORPHAN, Propagation};
use crate::store::{ObjKey, State};

struct Owner {
    key: GroupResource,
    okey: ObjKey,
    foreground: bool,
    orphan: bool,
}

/// One owner reference of a dependent.
struct OwnedBy {
    uid: String,
    /// `blockOwnerDeletion: true`: a foreground deletion of the owner waits for this dependent.
    blocks: bool,
}

fn ref_uid(r: &Value) -> &str {
    r.get("uid").and_then(Value::as_str).unwrap_or("")
}

fn blocks_owner_deletion(r: &Value) -> bool {
    r.get("blockOwnerDeletion")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

pub(super) fn reconcile(st: &mut State) -> bool {
    let mut owners: HashMap<String, Owner> = HashMap::new();
    let mut dependents: Vec<(GroupResource, ObjKey, Vec<OwnedBy>)> = Vec::new();
    for (gr, rs) in &st.resources {
        for (k, stored) in &rs.objects {
            let obj = &stored.obj;
            let fins = meta::finalizers(obj);
            let deleting = meta::is_deleting(obj);
            owners.insert(
                meta::uid(obj).to_string(),
                Owner {
                    key: gr.clone(),
                    okey: k.clone(),
                    foreground: deleting && fins.iter().any(|f| f == FOREGROUND),
                    orphan: deleting && fins.iter().any(|f| f == ORPHAN),
                },
            );
            let refs = meta::owner_refs(obj);
            if !refs.is_empty() {
                let owned_by = refs
                    .iter()
                    .map(|r| OwnedBy {
                        uid: ref_uid(r).to_string(),
                        blocks: blocks_owner_deletion(r),
                    })
                    .collect();
                dependents.push((gr.clone(), k.clone(), owned_by));
            }
        }
    }
    let mut changed = false;
    // Foreground-deleting owners that still have a blocking dependent.
    let mut blocked: HashSet<&str> = HashSet::new();
    for (gr, okey, owned_by) in &dependents {
        let live: Vec<&OwnedBy> = owned_by
            .iter()
            .filter(|o| owners.contains_key(&o.uid))
            .collect();
        // Orphaning owners: strip their references.
        let orphaned: Vec<&String> = live
            .iter()
            .map(|o| &o.uid)
            .filter(|u| owners.get(*u).is_some_and(|o| o.orphan))
            .collect();
        let dangling = owned_by.len() - live.len();
        if live.is_empty() {
            changed |= writes::delete_background(st, gr, okey);
            continue;
        }
        if dangling > 0 || !orphaned.is_empty() {
            changed |= strip_refs(st, gr, okey, |u| {
                !owners.contains_key(u) || orphaned.iter().any(|o| *o == u)
            });
            continue;
        }
        for owned_by in &live {
            if owners.get(&owned_by.uid).is_some_and(|o| o.foreground) {
                if owned_by.blocks {
                    blocked.insert(&owned_by.uid);
                }
                changed |= writes::delete_with(st, gr, okey, Propagation::Foreground);
            }
        }
    }
    // Owners whose foreground/orphan work is done lose the finalizer.
    for (uid, o) in &owners {
        if o.orphan {
            writes::drop_finalizer(st, &o.key, &o.okey, ORPHAN);
            changed = true;
        } else if o.foreground && !blocked.contains(uid.as_str()) {
            writes::drop_finalizer(st, &o.key, &o.okey, FOREGROUND);
            changed = true;
        }
    }
    changed
}

/// Removes the owner references for which `drop` is true; true if the object changed.
fn strip_refs(
    st: &mut State,
    gr: &GroupResource,
    okey: &ObjKey,
    drop: impl Fn(&str) -> bool,
) -> bool {
    let Some(obj) = st.get(gr, okey) else {
        return false;
    };
    let mut new = (*obj).clone();
    let kept: Vec<Value> = meta::owner_refs(&obj)
        .iter()
        .filter(|r| !drop(ref_uid(r)))
        .cloned()
        .collect();
    let md = meta::metadata_mut(&mut new);
    if kept.is_empty() {
        md.remove("ownerReferences");
    } else {
        md.insert("ownerReferences".into(), Value::Array(kept));
    }
    st.put(gr, new);
    true
}
