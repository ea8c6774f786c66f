//! Background controllers that upstream runs in kube-controller-manager or the
//! apiextensions server: CRD establishment and cleanup, namespace deletion, and the
//! garbage collector. Each is a synchronous pass over the state under the store lock;
//! a background task runs passes whenever a relevant write happens, and
//! [`crate::ApiServer::settle`] runs them until nothing changes. The optional workload
//! simulator (`workloads.rs`) is a separate task driven by deployment events and a delay.

mod crds;
mod gc;
mod namespaces;
pub(crate) mod workloads;

use std::sync::Arc;

use crate::kinds::resource_info::GroupResource;
use crate::shared::Shared;
use crate::store::{ObjKey, State};

/// Most passes a settle runs before giving up (guards against ping-pong).
const MAX_PASSES: usize = 100;

/// One pass of every controller; true if anything was written.
fn pass(st: &mut State) -> bool {
    let a = crds::reconcile(st);
    let b = namespaces::reconcile(st);
    let c = gc::reconcile(st);
    a || b || c
}

/// Runs passes until one changes nothing.
pub(crate) fn run_until_quiet(shared: &Shared) {
    for _ in 0..MAX_PASSES {
        let changed = pass(&mut shared.state.lock());
        if !changed {
            return;
        }
    }
    tracing::warn!("controllers did not settle after {MAX_PASSES} passes");
}

/// The background task: runs passes whenever notified, until shutdown.
pub(crate) async fn run(shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            () = crate::shared::shutting_down(&mut shutdown) => return,
            _ = shared.controllers.notified() => run_until_quiet(&shared),
        }
    }
}

/// Removes one finalizer from an object and persists it; a deleting object left with no
/// finalizers is removed.
pub(crate) fn drop_finalizer(st: &mut State, key: &GroupResource, okey: &ObjKey, fin: &str) {
    let Some(obj) = st.get(key, okey) else { return };
    let mut fins = crate::api::meta::finalizers(&obj);
    if !fins.iter().any(|f| f == fin) {
        return;
    }
    fins.retain(|f| f != fin);
    let mut new = (*obj).clone();
    crate::api::meta::set_finalizers(&mut new, fins.clone());
    if fins.is_empty() && crate::api::meta::is_deleting(&new) && crate::ops::graceless(&new) {
        st.remove(key, okey);
    } else {
        st.put(key, new);
    }
}

/// Deletes an object in the background (honouring its finalizers); true if it changed.
pub(crate) fn delete_background(st: &mut State, key: &GroupResource, okey: &ObjKey) -> bool {
    delete_with(st, key, okey, crate::ops::Propagation::Background)
}

/// Deletes an object with the given propagation (honouring its finalizers) unless it is
/// already being deleted; true if it changed.
pub(crate) fn delete_with(
    st: &mut State,
    key: &GroupResource,
    okey: &ObjKey,
    propagation: crate::ops::Propagation,
) -> bool {
    let Some(info) = st.resource(key).map(|r| r.info.clone()) else {
        return false;
    };
    let Some(obj) = st.get(key, okey) else {
        return false;
    };
    if crate::api::meta::is_deleting(&obj) {
        return false;
    }
    let opts = crate::ops::DeleteOptions {
        propagation: Some(propagation),
        grace: Some(0),
        ..Default::default()
    };
    crate::ops::delete(st, &info, &okey.0, &okey.1, &opts).is_ok()
}
