//! Namespace controller: empties a terminating namespace (honouring finalizers), then
//! removes it.

use super::writes;
use crate::machinery::meta;
use crate::machinery::resource_info::GroupResource;
use crate::store::State;

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
        for (gr, k) in content {
            changed |= writes::delete_background(st, &gr, &k);
        }
    }
    changed
}
