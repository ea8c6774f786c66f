//! CRD controller: establishes new CRDs (making their resources servable), keeps the
//! served description in sync with the CRD, and on deletion removes every custom
//! resource before letting the CRD go.

use std::sync::Arc;

use super::writes;
use crate::kinds::crd;
use crate::machinery::meta;
use crate::machinery::resource_info::GroupResource;
use crate::ops::CRD_CLEANUP;
use crate::store::State;

fn crd_key() -> GroupResource {
    GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions")
}

pub(super) fn reconcile(st: &mut State) -> bool {
    let key = crd_key();
    let Some(rs) = st.resource(&key) else {
        return false;
    };
    let crds: Vec<_> = rs
        .objects
        .iter()
        .map(|(k, v)| (k.clone(), v.obj.clone()))
        .collect();
    let mut changed = false;
    let mut wanted = Vec::new();
    for (okey, obj) in crds {
        let Some(info) = crd::resource_info(&obj) else {
            continue;
        };
        let gr = info.key();
        wanted.push(gr.clone());
        if meta::is_deleting(&obj) {
            changed |= cleanup(st, &gr, &okey);
            continue;
        }
        let registered = st.resource(&gr).map(|r| r.info.clone());
        if registered.as_deref() != Some(&info)
            && (crd::is_established(&obj) || registered.is_none())
        {
            st.register(Arc::new(info));
        }
        if !crd::is_established(&obj) {
            st.put(&key, crd::established(&obj));
            changed = true;
        }
    }
    let stale: Vec<GroupResource> = st
        .resources
        .iter()
        .filter(|(k, r)| !r.info.builtin && !wanted.contains(k))
        .map(|(k, _)| k.clone())
        .collect();
    for gr in stale {
        st.unregister(&gr);
        changed = true;
    }
    changed
}

/// Deletes the CRD's objects; once none is left, drops the cleanup finalizer.
fn cleanup(st: &mut State, gr: &GroupResource, crd_okey: &crate::store::ObjKey) -> bool {
    let keys: Vec<_> = st
        .resource(gr)
        .map(|r| r.objects.keys().cloned().collect())
        .unwrap_or_default();
    if keys.is_empty() {
        st.unregister(gr);
        writes::drop_finalizer(st, &crd_key(), crd_okey, CRD_CLEANUP);
        return true;
    }
    let mut changed = false;
    for k in keys {
        changed |= writes::delete_background(st, gr, &k);
    }
    changed
}
