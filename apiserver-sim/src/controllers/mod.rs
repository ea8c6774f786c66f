//! Background controllers that upstream runs in kube-controller-manager or the
//! apiextensions server: CRD establishment and cleanup, namespace deletion, the garbage
//! collector, and (when asked for) each namespace's `default` ServiceAccount and root CA
//! ConfigMap. Each is a synchronous pass over the state under the store lock;
//! a background task runs passes whenever a relevant write happens, and
//! [`crate::ApiServer::settle`] runs them until nothing changes. The optional workload
//! simulator (`workloads.rs`) is a separate task driven by deployment events and a delay.

mod crds;
mod gc;
mod namespace_defaults;
mod namespaces;
pub(crate) mod workloads;
mod writes;

use std::sync::Arc;

use crate::shared::Shared;
use crate::store::State;

/// Most passes a settle runs before giving up (guards against ping-pong).
const MAX_PASSES: usize = 100;

/// One pass of every controller; true if anything was written. `root_ca`: the bundle of
/// each namespace's root CA ConfigMap, when those are made.
fn pass(st: &mut State, root_ca: Option<&str>) -> bool {
    let a = crds::reconcile(st);
    let b = namespaces::reconcile(st);
    let c = gc::reconcile(st);
    let d = root_ca.is_some_and(|pem| namespace_defaults::reconcile(st, pem));
    a || b || c || d
}

/// Runs passes until one changes nothing.
pub(crate) fn run_until_quiet(shared: &Shared) {
    let root_ca = shared.config.root_ca.as_deref();
    for _ in 0..MAX_PASSES {
        let changed = pass(&mut shared.state.lock(), root_ca);
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
