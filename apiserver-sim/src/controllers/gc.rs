//! Garbage collector: deletes dependents whose owners (by uid) are all gone, drops
//! dangling owner references from dependents that still have a live owner, and carries
//! out foreground and orphan deletion of owners.

use std::collections::HashMap;

use serde_json::Value;

use crate::meta;
use crate::ops::{FOREGROUND, ORPHAN};
use crate::resource::GroupResource;
use crate::store::{ObjKey, State};

struct Owner {
    key: GroupResource,
    okey: ObjKey,
    foreground: bool,
    orphan: bool,
}

fn ref_uid(r: &Value) -> &str {
    r.get("uid").and_then(Value::as_str).unwrap_or("")
}

pub(super) fn reconcile(st: &mut State) -> bool {
    let mut owners: HashMap<String, Owner> = HashMap::new();
    let mut dependents: Vec<(GroupResource, ObjKey, Vec<String>)> = Vec::new();
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
                let uids = refs.iter().map(|r| ref_uid(r).to_string()).collect();
                dependents.push((gr.clone(), k.clone(), uids));
            }
        }
    }
    let mut changed = false;
    let mut has_dependents: HashMap<String, bool> = HashMap::new();
    for (gr, okey, uids) in &dependents {
        let live: Vec<&String> = uids.iter().filter(|u| owners.contains_key(*u)).collect();
        // Orphaning owners: strip their references.
        let orphaned: Vec<&String> = live
            .iter()
            .copied()
            .filter(|u| owners.get(*u).is_some_and(|o| o.orphan))
            .collect();
        let dangling = uids.len() - live.len();
        if live.is_empty() {
            changed |= super::delete_background(st, gr, okey);
            continue;
        }
        if dangling > 0 || !orphaned.is_empty() {
            changed |= strip_refs(st, gr, okey, |u| {
                !owners.contains_key(u) || orphaned.iter().any(|o| *o == u)
            });
            continue;
        }
        for u in &live {
            if owners.get(*u).is_some_and(|o| o.foreground) {
                has_dependents.insert((*u).clone(), true);
                changed |= super::delete_background(st, gr, okey);
            }
        }
    }
    // Owners whose foreground/orphan work is done lose the finalizer.
    for (uid, o) in &owners {
        if o.orphan {
            super::drop_finalizer(st, &o.key, &o.okey, ORPHAN);
            changed = true;
        } else if o.foreground && !has_dependents.contains_key(uid) {
            super::drop_finalizer(st, &o.key, &o.okey, FOREGROUND);
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
