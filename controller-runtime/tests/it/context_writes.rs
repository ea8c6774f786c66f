//! The context's tracked write methods: patch, patch_status and replace_status on the primary
//! object (a Deployment, which has a status subresource).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use kube::api::{Patch, PatchParams};
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn writes_through_the_context_reach_the_server() {
    if testkit::cluster::sim_only("virtual time") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    Controller::new(&manager)
        .for_(Watch::of::<Deployment>())
        .build(reconciler_fn(
            |_req: Request, ctx: Context<Deployment>| async move {
                let Some(cached) = ctx.get() else {
                    return Ok(Action::done());
                };
                if cached
                    .metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key("seen"))
                {
                    return Ok(Action::done());
                }
                ctx.patch(
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"annotations": {"seen": "yes"}}})),
                )
                .await?;
                let patched = ctx
                    .patch_status(
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"observedGeneration": 1}})),
                    )
                    .await?;
                let mut next = patched.clone();
                next.status
                    .get_or_insert_with(DeploymentStatus::default)
                    .ready_replicas = Some(0);
                ctx.replace_status(&next).await?;
                Ok::<_, ReconcileError>(Action::done())
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&deployment("web")).unwrap();
    eventually("the writes", Duration::from_secs(30), || {
        server.list::<Deployment>().first().is_some_and(|d| {
            let status = d.status.clone().unwrap_or_default();
            d.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a["seen"] == "yes")
                && status.observed_generation == Some(1)
                && status.ready_replicas == Some(0)
        })
    })
    .await;

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
