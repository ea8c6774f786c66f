//! Workload simulator (optional, off by default): the controllers and the node a cluster
//! runs workloads with, so that Deployments, ReplicaSets, Jobs and Pods behave as on a
//! cluster. A Deployment makes ReplicaSets (`deployments`, `revisions`, `rollout`,
//! `deployment_status`, `template_hash`), a ReplicaSet makes Pods (`replicasets`), a Job
//! makes Pods and completes (`jobs`), a Service with a selector gets Endpoints and an
//! EndpointSlice of its ready pods (`endpoints`), a PodDisruptionBudget has its status kept
//! for evictions (`disruption`), one simulated node (`node`) has every pod
//! scheduled to it and runs them (`kubelet`, `pod_status`): a configurable delay after a pod
//! is bound it is running and ready; a batch pod exits 0 a delay later; a deleted pod is
//! removed a delay after its deletion began. What a simulated container "wrote" is served
//! as `pods/log` (`container_log`).
//!
//! Every write goes through the normal write path as the component that makes it upstream
//! (`kube-controller-manager`, `kubelet`), so watchers see ADDED/MODIFIED/DELETED and
//! `managedFields` names the writer. The task follows the live events of the resources it
//! manages and runs passes under the store lock (never across an await) until one changes
//! nothing; the kubelet's delays use Tokio time (paused-time tests work). It stops on shutdown.

pub(crate) mod container_log;
mod deployment_status;
mod deployments;
mod disruption;
mod endpoints;
mod jobs;
mod kubelet;
mod node;
mod objects;
mod pod_status;
mod replicasets;
mod revisions;
mod rollout;
mod template_hash;

use std::sync::Arc;
use std::time::Duration;

use futures::future::select_all;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::time::Instant;

use crate::machinery::resource_info::GroupResource;
use crate::shared::Shared;
use crate::store::{Event, State};

/// Most passes in a row under one lock hold (a guard against two controllers undoing each
/// other's writes; the next event starts another round).
const MAX_PASSES: usize = 20;

/// One pass of every simulated controller; true if anything was written.
fn pass(st: &mut State, timers: &mut kubelet::Timers, now: Instant) -> bool {
    let a = deployments::reconcile(st);
    let b = replicasets::reconcile(st);
    let c = jobs::reconcile(st);
    let d = kubelet::reconcile(st, timers, now);
    let e = endpoints::reconcile(st);
    let f = disruption::reconcile(st);
    a || b || c || d || e || f
}

/// Runs passes until one changes nothing (at most [`MAX_PASSES`]).
fn settle(st: &mut State, timers: &mut kubelet::Timers) {
    for _ in 0..MAX_PASSES {
        if !pass(st, timers, Instant::now()) {
            return;
        }
    }
    tracing::debug!("workload simulator: still changing after {MAX_PASSES} passes");
}

/// Takes every event already queued; false when a channel closed.
fn drain(rxs: &mut [Receiver<Arc<Event>>]) -> bool {
    for rx in rxs {
        loop {
            match rx.try_recv() {
                Ok(_) | Err(TryRecvError::Lagged(_)) => {}
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return false,
            }
        }
    }
    true
}

/// The simulator task: registers the node, then runs passes after every change of the
/// managed resources and whenever a kubelet step is due, until shutdown.
pub(crate) async fn run(shared: Arc<Shared>, delay: Duration) {
    let mut shutdown = shared.shutdown.subscribe();
    if *shutdown.borrow() {
        return;
    }
    let mut timers = kubelet::Timers::new(delay);
    let mut rxs: Vec<Receiver<Arc<Event>>> = {
        let mut st = shared.state.lock();
        node::register(&mut st);
        let rxs = [
            ("apps", "deployments"),
            ("apps", "replicasets"),
            ("batch", "jobs"),
            ("", "pods"),
            ("", "nodes"),
            ("", "services"),
            ("policy", "poddisruptionbudgets"),
        ]
        .iter()
        .filter_map(|(g, r)| st.subscribe(&GroupResource::new(g, r)))
        .collect();
        settle(&mut st, &mut timers);
        rxs
    };
    if rxs.is_empty() {
        return;
    }
    loop {
        let due = timers.next();
        tokio::select! {
            () = crate::shared::shutting_down(&mut shutdown) => return,
            (ev, _, _) = select_all(rxs.iter_mut().map(|rx| Box::pin(rx.recv()))) => {
                if matches!(ev, Err(RecvError::Closed)) {
                    return;
                }
            }
            _ = async {
                match due {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
        }
        let mut st = shared.state.lock();
        settle(&mut st, &mut timers);
        // Everything queued so far was written before or during these passes: seen.
        if !drain(&mut rxs) {
            return;
        }
    }
}
